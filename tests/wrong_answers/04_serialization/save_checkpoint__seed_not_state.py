# Mistake: saves the seed the generator started from instead of its current state.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.initial_seed(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
