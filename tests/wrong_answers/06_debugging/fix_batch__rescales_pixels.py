# Mistake: divides uint8 images by 255 while casting them, which changes the values; the exercise asks for a cast, not a normalisation.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    weight = next(model.parameters())
    if x.dtype == torch.uint8:
        x = x / 255
    return x.to(weight.device, weight.dtype), y.to(weight.device, torch.int64)
