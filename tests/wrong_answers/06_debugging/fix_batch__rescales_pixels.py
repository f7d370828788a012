# Mistake: divides uint8 images by 255 while casting them, which changes the values; the exercise asks for a cast, not a normalisation.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    weight = next(model.parameters())
    if x.dtype == torch.uint8:
        x = x / 255
    return x.to(weight.device, weight.dtype), y.to(weight.device, torch.int64)
