# Mistake: adds the batch losses up (val_loss += ...) and never divides: a number that grows with the validation set.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            val_loss += loss_fn(model(x), y).item()
    return val_loss
