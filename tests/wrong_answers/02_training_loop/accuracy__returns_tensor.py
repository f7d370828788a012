# Mistake: counts with tensors and never calls .item(), so it returns a tensor instead of a float.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct = correct + (model(x).argmax(dim=1) == y).sum()
            total += len(y)
    return correct / total
