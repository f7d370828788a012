# Mistake: returns what load_state_dict returns (the missing / unexpected keys report) instead of the model.
def load_weights(model, path, device):
    """Load the state_dict at `path` into `model`; return `model`, on `device`, in eval mode.

    The file is read with map_location=device and weights_only=True.
    """
    state = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.eval()
    return model.load_state_dict(state)
