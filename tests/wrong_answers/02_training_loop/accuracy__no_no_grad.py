# Mistake: the original buggy loop's second bug: no torch.no_grad(), so every batch's graph is recorded.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += len(y)
    return correct / total
