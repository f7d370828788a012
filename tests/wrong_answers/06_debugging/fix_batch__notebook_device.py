# Mistake: moves the batch to the notebook's global `device` instead of the device the model's parameters are on.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    dtype = next(model.parameters()).dtype
    return x.to(device, dtype), y.to(device, torch.int64)
