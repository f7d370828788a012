# Mistake: saves model.cpu().state_dict() "so the file loads anywhere"; .cpu() moves the caller's model itself to the CPU, in the middle of training.
def save_weights(model, path):
    """Save `model.state_dict()` (parameters and buffers, nothing else) to `path` with torch.save."""
    torch.save(model.cpu().state_dict(), path)
