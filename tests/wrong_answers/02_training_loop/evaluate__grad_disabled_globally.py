# Mistake: switches autograd off with torch.set_grad_enabled(False) and never back on, so training after it records no gradients.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    total_loss, total_samples = 0.0, 0
    torch.set_grad_enabled(False)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total_loss += loss_fn(model(x), y).item() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
