# Mistake: returns the scaled loss (multiplied by the scaler's factor), not the loss.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    dtype = torch.float16 if x.device.type == "cuda" else torch.bfloat16
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    return scaled.item()
