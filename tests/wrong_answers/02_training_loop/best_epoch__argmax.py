# Mistake: picks the highest validation loss (argmax for argmin).
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    return max(range(len(val_losses)), key=lambda epoch: val_losses[epoch])
