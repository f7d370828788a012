# Mistake: moves the inputs to the model's device but keeps their dtype, so float64 (NumPy) or uint8 inputs still meet float32 weights.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device), y.to(weight.device, torch.int64)
