# Mistake: averages the batch losses, so the short last batch weighs as much as a full one.
def train_one_epoch(model, loader, loss_fn, optimizer, device):
    """Train `model` for one pass over `loader`; return the mean training loss over samples as a float."""
    model.train()
    batch_losses = []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        batch_losses.append(loss.item())
    return sum(batch_losses) / len(batch_losses)
