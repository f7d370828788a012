# Mistake: puts the mode back by assigning features.training, which changes only the outer module: the batch norm inside stays in eval mode.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    was_training = features.training
    features.eval()
    with torch.no_grad():
        out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    features.training = was_training
    return int(out[0].numel())
