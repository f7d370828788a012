# Mistake: casts labels with .int(), which gives int32; cross_entropy wants int64 (Long) class indices.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.int().to(weight.device)
