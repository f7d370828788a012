# Mistake: divides the number of correct predictions by len(loader), the number of batches, not of samples.
def accuracy(model, loader, device):
    """Correct predictions (argmax of the outputs) over all samples of `loader`, in eval mode, as a float."""
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(dim=1) == y).sum().item()
    return correct / len(loader)
