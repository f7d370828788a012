# Mistake: compares with <=, so of several equal lowest losses it keeps the last one.
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    best = 0
    for epoch, loss in enumerate(val_losses):
        if loss <= val_losses[best]:
            best = epoch
    return best
