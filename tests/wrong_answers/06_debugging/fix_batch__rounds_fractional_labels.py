# Mistake: rounds fractional labels to the nearest class instead of refusing them, so 1.5 quietly becomes class 2.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(device=weight.device, dtype=weight.dtype), y.round().to(device=weight.device, dtype=torch.int64)
