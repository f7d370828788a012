# Mistake: "restores" the mode with features.train() whatever it was, so features that were in eval mode come back in training mode.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    features.eval()
    with torch.no_grad():
        out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    features.train()
    return int(out[0].numel())
