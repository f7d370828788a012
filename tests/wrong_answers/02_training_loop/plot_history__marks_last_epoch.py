# Mistake: marks the last epoch (where training stopped) instead of the best one.
def plot_history(history):
    """A Figure of training and validation loss against epoch, with the best epoch marked."""
    fig, ax = plt.subplots()
    ax.plot(history["train_loss"], label="train")
    ax.plot(history["val_loss"], label="validation")
    ax.axvline(len(history["val_loss"]) - 1, color="grey", linestyle="--", label="best epoch")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend()
    return fig
