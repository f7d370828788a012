# Mistake: "fixes" the dtype by converting the features to float32 (features.float()) instead of making the dummy in their dtype, which changes the caller's float64 / bfloat16 module.
def flattened_size(features, input_shape):
    """Number of features one example of shape `input_shape` has after `features`, as an int."""
    features.float()
    first = next(features.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    was_training = features.training
    features.eval()
    try:
        with torch.no_grad():
            out = features(torch.zeros(1, *input_shape, device=device))
    finally:
        features.train(was_training)
    return int(out[0].numel())
