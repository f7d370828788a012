# Mistake: old gradients are never cleared, so every step adds the previous steps' gradients.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    device_type = x.device.type
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
