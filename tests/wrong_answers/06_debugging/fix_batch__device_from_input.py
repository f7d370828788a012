# Mistake: takes the target device from the batch instead of the model, so nothing moves.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(x.device, weight.dtype), y.to(x.device, torch.int64)
