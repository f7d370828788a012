# Mistake: no torch.no_grad(), so autograd records every validation batch for a backward pass that never comes.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    total_loss, total_samples = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total_loss += loss_fn(model(x), y).item() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
