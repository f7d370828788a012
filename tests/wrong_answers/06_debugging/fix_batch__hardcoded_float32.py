# Mistake: always casts inputs to float32 instead of the model's own dtype, which breaks float64 and bfloat16 models.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    return x.to(weight.device, torch.float32), y.to(weight.device, torch.int64)
