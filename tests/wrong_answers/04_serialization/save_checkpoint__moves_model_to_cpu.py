# Mistake: saves model.cpu().state_dict() for a portable file; .cpu() moves the model being trained to the CPU, away from its optimizer state.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save everything needed to resume after `epoch` (the epoch that just finished, from 0) to `path`.

    Keys: "epoch", "model", "optimizer", "scheduler", "rng", "cuda_rng".
    """
    torch.save({
        "epoch": epoch,
        "model": model.cpu().state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
