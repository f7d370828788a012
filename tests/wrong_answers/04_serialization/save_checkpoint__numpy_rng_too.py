# Mistake: adds NumPy's generator state for good measure; np.random.get_state() holds a NumPy array, which weights_only=True refuses.
import numpy as np


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save everything needed to resume after `epoch` (the epoch that just finished, from 0) to `path`.

    Keys: "epoch", "model", "optimizer", "scheduler", "rng", "cuda_rng".
    """
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
        "numpy_rng": np.random.get_state(),
    }, path)
