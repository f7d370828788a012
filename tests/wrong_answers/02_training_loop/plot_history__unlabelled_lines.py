# Mistake: two unlabelled lines and no legend: nobody can tell which curve is which.
def plot_history(history):
    """A Figure of training and validation loss against epoch, with the best epoch marked."""
    fig, ax = plt.subplots()
    ax.plot(history["train_loss"])
    ax.plot(history["val_loss"])
    ax.axvline(history["best_epoch"], color="grey", linestyle="--")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    return fig
