# Mistake: the original buggy loop's first bug: no model.eval(), so validation runs with dropout and batch statistics.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    correct, total = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += len(y)
    return correct / total
