# Mistake: always casts inputs to float32 instead of the model's own dtype, which breaks float64 and bfloat16 models.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    return x.to(weight.device, torch.float32), y.to(weight.device, torch.int64)
