# Mistake: the mean of the batch losses, so a small last batch counts as much as a full one.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    batch_losses = []
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            batch_losses.append(loss_fn(model(x), y).item())
    return sum(batch_losses) / len(batch_losses)
