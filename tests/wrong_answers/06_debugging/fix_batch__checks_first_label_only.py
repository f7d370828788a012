# Mistake: checks only the first label of the batch, so a fractional label further on is truncated without a word.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and y[0] != y[0].round():
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(device=weight.device, dtype=weight.dtype), y.to(device=weight.device, dtype=torch.int64)
