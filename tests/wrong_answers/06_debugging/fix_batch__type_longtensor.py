# Mistake: casts the labels with the old y.type(torch.LongTensor), which also moves them back to the CPU.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device, weight.dtype), y.to(weight.device).type(torch.LongTensor)
