# Mistake: saves only optimizer.param_groups (the learning rates), not optimizer.state_dict(), so the momentum buffers are lost.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save everything needed to resume after `epoch` (the epoch that just finished, from 0) to `path`.

    Keys: "epoch", "model", "optimizer", "scheduler", "rng", "cuda_rng".
    """
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": {"param_groups": [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]},
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
