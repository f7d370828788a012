# Mistake: pickles the model and optimizer objects themselves, which weights_only=True refuses to load.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": epoch,
        "model": model,
        "optimizer": optimizer,
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
