# Mistake: weights_only=False, so a file from anywhere can run code while it is loaded.
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=False)
    model.to(device)
    model.load_state_dict(state)
    model.eval()
    return model
