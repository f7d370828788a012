# Mistake: casts labels with .int(), which gives int32; cross_entropy wants int64 (Long) class indices.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.int().to(weight.device)
