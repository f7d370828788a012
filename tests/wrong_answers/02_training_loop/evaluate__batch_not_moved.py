# Mistake: never moves the batches to the device: right on a CPU, a device mismatch with a model on a GPU.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    total_loss, total_samples = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total_loss += loss_fn(model(x), y).item() * len(x)
            total_samples += len(x)
    return total_loss / total_samples
