# Mistake: strict=False to silence load errors, so a model of the wrong architecture half-loads silently.
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(state, strict=False)
    model.eval()
    return model
