# Mistake: casts the inputs only when they are already floating point, so uint8 images keep their integer dtype.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    x = x.to(weight.device)
    if x.is_floating_point():
        x = x.to(weight.dtype)
    return x, y.to(weight.device, torch.int64)
