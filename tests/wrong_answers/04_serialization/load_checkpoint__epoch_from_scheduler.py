# Mistake: returns scheduler.last_epoch as the epoch to resume from instead of checkpoint["epoch"] + 1; it only agrees while the scheduler steps exactly once per epoch.
def load_checkpoint(path, model, optimizer, scheduler, device):
    """Restore a checkpoint written by save_checkpoint; return the first epoch still to train.

    The file is read with map_location=device and weights_only=True; `model` ends on `device`.
    """
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.set_rng_state(checkpoint["rng"].cpu())
    torch.cuda.set_rng_state_all([state.cpu() for state in checkpoint["cuda_rng"]])
    return scheduler.last_epoch
