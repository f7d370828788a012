# Mistake: saves the list of tensors (state_dict().values()) without their names, so nothing says which tensor belongs to which layer.
def save_weights(model, path):
    """Save `model.state_dict()` (parameters and buffers, nothing else) to `path` with torch.save."""
    torch.save(list(model.state_dict().values()), path)
