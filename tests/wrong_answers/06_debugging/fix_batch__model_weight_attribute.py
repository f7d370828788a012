# Mistake: reads the device and dtype from model.weight, which only a bare layer has; any model built from submodules (nn.Sequential, a CNN) raises AttributeError.
def fix_batch(model, batch):
    """(x, y): x on the model's device in its parameter dtype, y as int64 labels there; ValueError for fractional labels."""
    x, y = batch
    if y.is_floating_point() and not torch.equal(y, y.round()):
        raise ValueError("class labels must be whole numbers")
    return x.to(model.weight.device, model.weight.dtype), y.to(model.weight.device, torch.int64)
