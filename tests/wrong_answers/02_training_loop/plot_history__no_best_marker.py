# Mistake: plots both curves but never marks the best epoch.
def plot_history(history):
    """A Figure of training and validation loss against epoch, with the best epoch marked."""
    fig, ax = plt.subplots()
    ax.plot(history["train_loss"], label="train")
    ax.plot(history["val_loss"], label="validation")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend()
    return fig
