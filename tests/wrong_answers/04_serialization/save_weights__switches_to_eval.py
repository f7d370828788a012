# Mistake: calls model.eval() "to save the inference version"; the mode is not in the state_dict, and the caller's model is left in eval mode.
def save_weights(model, path):
    """Save `model.state_dict()` (parameters and buffers, nothing else) to `path` with torch.save."""
    model.eval()
    torch.save(model.state_dict(), path)
