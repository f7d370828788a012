# Mistake: averages the accuracy of each batch, so the short last batch counts as much as a full one.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    batch_accuracies = []
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            batch_accuracies.append((model(x).argmax(dim=1) == y).float().mean().item())
    return sum(batch_accuracies) / len(batch_accuracies)
