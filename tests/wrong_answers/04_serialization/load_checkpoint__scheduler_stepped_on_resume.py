# Mistake: calls scheduler.step() after restoring it "to move on to the next epoch", so the schedule runs one epoch ahead.
def load_checkpoint(path, model, optimizer, scheduler, device):
    """Restore a checkpoint written by save_checkpoint; return the first epoch still to train.

    The file is read with map_location=device and weights_only=True; `model` ends on `device`.
    """
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    scheduler.step()
    torch.set_rng_state(checkpoint["rng"].cpu())
    torch.cuda.set_rng_state_all([state.cpu() for state in checkpoint["cuda_rng"]])
    return checkpoint["epoch"] + 1
