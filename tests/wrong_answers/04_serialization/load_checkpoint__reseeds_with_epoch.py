# Mistake: reseeds the generator with the epoch number instead of restoring its saved state.
def load_checkpoint(path, model, optimizer, scheduler, device):
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.manual_seed(checkpoint["epoch"])
    return checkpoint["epoch"] + 1
