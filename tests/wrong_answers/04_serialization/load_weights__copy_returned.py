# Mistake: loads into a deep copy and returns the copy, so the model the caller built is left untrained.
import copy


def load_weights(model, path, device):
    """Load the state_dict at `path` into `model`; return `model`, on `device`, in eval mode.

    The file is read with map_location=device and weights_only=True.
    """
    state = torch.load(path, map_location=device, weights_only=True)
    loaded = copy.deepcopy(model).to(device)
    loaded.load_state_dict(state)
    loaded.eval()
    return loaded
