# Mistake: no map_location, so a checkpoint written on a GPU machine cannot be resumed on a CPU-only one.
def load_checkpoint(path, model, optimizer, scheduler, device):
    checkpoint = torch.load(path, weights_only=True)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.set_rng_state(checkpoint["rng"].cpu())
    torch.cuda.set_rng_state_all([state.cpu() for state in checkpoint["cuda_rng"]])
    return checkpoint["epoch"] + 1
