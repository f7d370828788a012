# Mistake: zero_grad between backward and step wipes the gradients just computed, so step changes nothing.
def train_one_epoch(model, loader, loss_fn, optimizer, device):
    """Train `model` for one pass over `loader`; return the mean training loss over samples as a float."""
    model.train()
    total_loss, total_samples = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        total_loss += loss.item() * len(x)
        total_samples += len(x)
    return total_loss / total_samples
