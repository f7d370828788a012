# Mistake: adds the detached losses up on the device, as taught, but returns the 0-dim tensor instead of calling .item() once at the end.
def train_one_epoch(model, loader, loss_fn, optimizer, device):
    """Train `model` for one pass over `loader`; return the mean training loss over samples as a float."""
    model.train()
    total_loss, total_samples = torch.zeros((), device=device), 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
