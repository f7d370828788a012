# Mistake: numbers the epochs 1..n on the x axis, as a log would print them, so every point (and the best-epoch mark) sits one epoch late.
def plot_history(history):
    """A Figure of training and validation loss against epoch, with the best epoch marked."""
    fig, ax = plt.subplots()
    epochs = range(1, len(history["train_loss"]) + 1)
    ax.plot(epochs, history["train_loss"], label="train")
    ax.plot(epochs, history["val_loss"], label="validation")
    ax.axvline(history["best_epoch"] + 1, color="grey", linestyle="--", label="best epoch")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend()
    return fig
