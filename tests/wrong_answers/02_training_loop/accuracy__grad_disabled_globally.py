# Mistake: switches autograd off with torch.set_grad_enabled(False) and never back on, so the next training epoch records no gradients.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    correct, total = 0, 0
    torch.set_grad_enabled(False)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += len(y)
    return correct / total
