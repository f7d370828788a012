# Mistake: moves and casts the inputs but only casts the labels, which stay on the CPU while the model and its outputs are on another device.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.long()
