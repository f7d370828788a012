# Mistake: forgets model.eval(), so dropout stays on and batch norm uses (and updates) batch statistics.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    total_loss, total_samples = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            total_loss += loss_fn(model(x), y).item() * len(x)
            total_samples += len(x)
    return total_loss / total_samples
