# Mistake: the scaler is used but the forward pass never runs under autocast: this is plain float32 training.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
