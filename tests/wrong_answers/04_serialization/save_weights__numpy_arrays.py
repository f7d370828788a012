# Mistake: converts every tensor to a NumPy array "to make the file portable"; NumPy arrays are not allowed by weights_only=True.
def save_weights(model, path):
    """Save `model.state_dict()` (parameters and buffers, nothing else) to `path` with torch.save."""
    torch.save({name: tensor.detach().cpu().numpy() for name, tensor in model.state_dict().items()}, path)
