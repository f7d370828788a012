# Mistake: no map_location, so a checkpoint saved on a GPU cannot be read on a CPU-only machine.
def load_weights(model, path, device):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state)
    model.to(device)
    model.eval()
    return model
