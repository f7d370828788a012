# Mistake: returns the lowest loss itself instead of the epoch it happened in.
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    return min(val_losses)
