# Mistake: gradients cleared after the step instead of before it, so gradients already on the model leak into this step.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    dtype = torch.float16 if x.device.type == "cuda" else torch.bfloat16
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
