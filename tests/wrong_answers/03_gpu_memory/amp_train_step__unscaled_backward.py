# Mistake: loss.backward() on the unscaled loss, then scaler.step divides gradients that were never scaled.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    device_type = x.device.type
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(x), y)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
