# Mistake: uses x.float() for the inputs (float32 always) and takes only the device from the model.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.float().to(weight.device), y.long().to(weight.device)
