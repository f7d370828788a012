# Mistake: casts the labels with the old y.type(torch.LongTensor), which also moves them back to the CPU.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.to(weight.device).type(torch.LongTensor)
