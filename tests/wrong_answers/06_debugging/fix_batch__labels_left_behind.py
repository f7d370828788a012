# Mistake: moves and casts the inputs but only casts the labels, which stay on the CPU while the model and its outputs are on another device.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.long()
