# Mistake: casts the labels to the model's dtype along with the inputs, so cross_entropy gets float labels.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.to(weight.device, weight.dtype)
