# Mistake: the scheduler's state is not saved, so the learning-rate schedule restarts on resume.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
