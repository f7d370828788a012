# Mistake: detaches the outputs instead of using torch.no_grad(): the forward pass still records a graph and saves activations.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).detach().argmax(dim=1) == y).sum().item()
        total += len(y)
    return correct / total
