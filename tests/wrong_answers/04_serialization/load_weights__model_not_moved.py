# Mistake: reads the file onto the device but never moves the model there (on a GPU machine the model stays on the CPU).
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state)
    model.eval()
    return model
