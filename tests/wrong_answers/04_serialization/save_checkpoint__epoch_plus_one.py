# Mistake: saves epoch + 1 (the next epoch) where the epoch that just finished belongs: off by one.
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": epoch + 1,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }, path)
