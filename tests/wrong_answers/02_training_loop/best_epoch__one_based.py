# Mistake: counts epochs from 1, as a log line would print them, instead of returning the list index.
def best_epoch(val_losses):
    """The 0-based index (an int) of the lowest validation loss; the first one when several are equal."""
    return val_losses.index(min(val_losses)) + 1
