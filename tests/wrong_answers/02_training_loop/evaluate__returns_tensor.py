# Mistake: adds the losses up on the device, as taught, but returns the 0-dim tensor instead of converting it with .item().
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    total_loss, total_samples = torch.zeros((), device=device), 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            total_loss += loss_fn(model(x), y) * len(x)
            total_samples += len(x)
    return total_loss / total_samples
