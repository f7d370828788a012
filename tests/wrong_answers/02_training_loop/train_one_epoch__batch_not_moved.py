# Mistake: never moves the batch to the device; works on a CPU, fails as soon as the model is on a GPU.
def train_one_epoch(model, loader, loss_fn, optimizer, device):
    """Train `model` for one pass over `loader`; return the mean training loss over samples as a float."""
    model.train()
    total_loss, total_samples = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
