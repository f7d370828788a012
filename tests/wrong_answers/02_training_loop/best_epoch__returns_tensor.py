# Mistake: returns torch's argmin as a 0-dimensional tensor instead of a Python int.
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    return torch.tensor(val_losses).argmin()
