# Mistake: looks for fractional labels only when they are float32, so float64 labels (as NumPy makes them) are truncated silently.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.dtype == torch.float32 and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(device=weight.device, dtype=weight.dtype), y.to(device=weight.device, dtype=torch.int64)
