# Mistake: reads the device and dtype from next(features.parameters()) with no fallback, so features without parameters (pooling only) raise StopIteration.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters())
    was_training = features.training
    features.eval()
    try:
        with torch.no_grad():
            out = features(torch.zeros(1, *input_shape, device=first.device, dtype=first.dtype))
    finally:
        features.train(was_training)
    return int(out[0].numel())
