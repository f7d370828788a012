# Mistake: scaler.update() is never called, so the scale factor never adapts (and the scaler refuses the next step).
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    device_type = x.device.type
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    return loss.item()
