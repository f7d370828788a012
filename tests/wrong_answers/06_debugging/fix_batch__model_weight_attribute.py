# Mistake: reads the device and dtype from model.weight, which only a bare layer has; any model built from submodules (nn.Sequential, a CNN) raises AttributeError.
def fix_batch(model, batch):
    """(x, y) with x on the model's device in its parameter dtype, and y as int64 labels on that device."""
    x, y = batch
    return x.to(model.weight.device, model.weight.dtype), y.to(model.weight.device, torch.int64)
