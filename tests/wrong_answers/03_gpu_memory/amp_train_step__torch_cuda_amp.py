# Mistake: the deprecated torch.cuda.amp.autocast(), which only knows CUDA and switches itself off on a CPU.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
