# Mistake: detaches the loss afterwards instead of using torch.no_grad(); the graph is still built for every batch.
def evaluate(model, loader, loss_fn, device):
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float."""
    model.eval()
    total_loss, total_samples = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y).detach()
        total_loss += float(loss) * len(x)
        total_samples += len(x)
    return total_loss / total_samples
