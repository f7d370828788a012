# Mistake: casts the labels with .to(torch.int64) without looking at them, so a fractional label (1.5) is silently truncated to another class instead of raising a ValueError.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(device=weight.device, dtype=weight.dtype), y.to(device=weight.device, dtype=torch.int64)
