# Mistake: the device type comes from x, but the dtype from the machine: float16 on a CPU batch whenever CUDA exists.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    dtype = torch.float16 if torch.cuda.is_available() else torch.bfloat16
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
