# Mistake: saves scheduler.get_last_lr() (the current learning rates) instead of the scheduler's state_dict.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save everything needed to resume after `epoch` (the epoch that just finished, from 0) to `path`.

    Keys: "epoch", "model", "optimizer", "scheduler", "rng", "cuda_rng".
    """
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.get_last_lr(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
