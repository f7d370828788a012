# Mistake: stores None under "cuda_rng" on a machine without a GPU instead of torch.cuda.get_rng_state_all() (an empty list).
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
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }, path)
