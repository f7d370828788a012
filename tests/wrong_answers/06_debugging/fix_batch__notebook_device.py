# Mistake: moves the batch to the notebook's global `device` instead of the device the model's parameters are on.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    dtype = next(model.parameters()).dtype
    return x.to(device, dtype), y.to(device, torch.int64)
