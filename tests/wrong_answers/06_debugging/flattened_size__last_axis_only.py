# Mistake: returns the size of the output's last axis (its width) instead of the number of values per example.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    was_training = features.training
    features.eval()
    try:
        with torch.no_grad():
            out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    finally:
        features.train(was_training)
    return int(out.shape[-1])
