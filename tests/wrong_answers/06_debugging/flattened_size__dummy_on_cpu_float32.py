# Mistake: builds the dummy input with torch.zeros defaults (CPU, float32), so features on another device or in another dtype raise a device or dtype error.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    was_training = features.training
    features.eval()
    try:
        with torch.no_grad():
            out = features(torch.zeros(1, *input_shape))
    finally:
        features.train(was_training)
    return int(out[0].numel())
