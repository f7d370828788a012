# Mistake: the scheduler is not restored, so the learning rate changes at the wrong epochs.
def load_checkpoint(path, model, optimizer, scheduler, device):
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    torch.set_rng_state(checkpoint["rng"].cpu())
    torch.cuda.set_rng_state_all([state.cpu() for state in checkpoint["cuda_rng"]])
    return checkpoint["epoch"] + 1
