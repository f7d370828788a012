# Mistake: autocast's device type and dtype taken from the machine (is CUDA there?), not from the batch x.
def amp_train_step(model, x, y, loss_fn, optimizer, scaler):
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.float16 if device_type == "cuda" else torch.bfloat16
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
