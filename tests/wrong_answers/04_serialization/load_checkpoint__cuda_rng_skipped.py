# Mistake: restores the CPU generator but skips the GPU generators ("I have no GPU"), so on a GPU dropout masks differ after a resume.
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
    return checkpoint["epoch"] + 1
