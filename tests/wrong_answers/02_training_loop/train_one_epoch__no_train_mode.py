# Mistake: never calls model.train(), so a model left in eval mode by validation trains with dropout off and batch norm frozen.
def train_one_epoch(model, loader, loss_fn, optimizer, device):
    """Train `model` for one pass over `loader`; return the mean training loss over samples as a float."""
    total_loss, total_samples = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
