# Mistake: wraps load_state_dict in try/except and prints the error, so a model of the wrong architecture is returned with its random weights.
def load_weights(model, path, device):
    """Load the state_dict at `path` into `model`; return `model`, on `device`, in eval mode.

    The file is read with map_location=device and weights_only=True.
    """
    state = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        print("could not load the weights:", error)
    model.eval()
    return model
