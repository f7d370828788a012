# Mistake: the new spelling with device_type hard-coded to "cuda": on a machine without CUDA it warns and switches itself off.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
