# Mistake: turns gradients off with torch.set_grad_enabled(False) and never turns them back on, so after measuring, no later training step records a graph.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    dtype = first.dtype if first is not None else torch.float32
    was_training = features.training
    features.eval()
    torch.set_grad_enabled(False)
    out = features(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    features.train(was_training)
    return int(out[0].numel())
