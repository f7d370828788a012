# Mistake: optimizer.step() called directly, so the still-scaled gradients are applied (and inf steps not skipped).
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    device_type = x.device.type
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    optimizer.step()
    scaler.update()
    return loss.item()
