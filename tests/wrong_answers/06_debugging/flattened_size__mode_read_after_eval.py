# Mistake: reads features.training after calling eval(), so it always "restores" eval mode.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    features.eval()
    was_training = features.training
    with torch.no_grad():
        out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    features.train(was_training)
    return int(out[0].numel())
