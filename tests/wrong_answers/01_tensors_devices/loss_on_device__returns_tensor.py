# Mistake: returns the loss tensor instead of a Python float (no .item())
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    model.to(device)
    return loss_fn(model(inputs.to(device)), targets.to(device))
