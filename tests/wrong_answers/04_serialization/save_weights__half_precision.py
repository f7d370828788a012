# Mistake: halves the file by saving every tensor as float16, so the saved weights are rounded (and batch norm's counter changes dtype).
def save_weights(model, path):
    """Save `model.state_dict()` (parameters and buffers, nothing else) to `path` with torch.save."""
    torch.save({name: tensor.half() for name, tensor in model.state_dict().items()}, path)
