# Mistake: measures in training mode, so batch norm updates its running statistics from the dummy input (and fails on a batch of one after global pooling).
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    with torch.no_grad():
        out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    return int(out[0].numel())
