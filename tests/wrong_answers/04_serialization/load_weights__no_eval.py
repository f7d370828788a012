# Mistake: loads the weights but leaves the model in training mode (dropout stays active).
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(state)
    return model
