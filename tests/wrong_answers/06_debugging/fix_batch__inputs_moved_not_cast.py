# Mistake: moves the inputs to the model's device but keeps their dtype, so float64 (NumPy) or uint8 inputs still meet float32 weights.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device), y.to(weight.device, torch.int64)
