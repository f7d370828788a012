# Mistake: moves the model to the CPU whatever device was asked for (right only on a CPU-only machine).
def load_weights(model, path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.cpu()
    model.load_state_dict(state)
    model.eval()
    return model
