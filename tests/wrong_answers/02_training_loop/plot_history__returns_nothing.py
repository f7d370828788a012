# Mistake: shows the plot with plt.show() and returns nothing, so the caller gets None instead of a Figure.
def plot_history(history):
    """A Figure of training and validation loss against epoch, with the best epoch marked."""
    plt.plot(history["train_loss"], label="train")
    plt.plot(history["val_loss"], label="validation")
    plt.axvline(history["best_epoch"], color="grey", linestyle="--", label="best epoch")
    plt.xlabel("epoch")
    plt.ylabel("loss")
    plt.legend()
    plt.show()
