# Mistake: sorts the caller's list in place to find the minimum, then looks it up in the now-sorted list.
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    val_losses.sort()
    return val_losses.index(val_losses[0])
