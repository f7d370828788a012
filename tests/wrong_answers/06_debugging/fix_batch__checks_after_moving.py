# Mistake: moves the labels to the model's device first and checks them there, which needs their values on that device; the meta device has none, so a meta model fails even for whole-number labels.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    weight = next(model.parameters())
    y = y.to(weight.device)
    if y.is_floating_point() and bool((y != y.round()).any()):
        raise ValueError("class labels must be whole numbers")
    return x.to(device=weight.device, dtype=weight.dtype), y.to(torch.int64)
