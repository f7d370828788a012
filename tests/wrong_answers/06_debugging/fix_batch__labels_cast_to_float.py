# Mistake: casts the labels to the model's dtype along with the inputs, so cross_entropy gets float labels.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.to(weight.device, weight.dtype)
