# Mistake: sets model.training = False by hand, which does not reach the submodules (dropout stays on).
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(state)
    model.training = False
    return model
