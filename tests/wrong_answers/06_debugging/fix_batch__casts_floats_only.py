# Mistake: casts the inputs only when they are already floating point, so uint8 images keep their integer dtype.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    x = x.to(weight.device)
    if x.is_floating_point():
        x = x.to(weight.dtype)
    return x, y.to(weight.device, torch.int64)
