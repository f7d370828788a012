# Mistake: calls inputs.to(device) but throws the result away, so the model runs on the CPU copy
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    model.to(device)
    inputs.to(device)
    targets = targets.to(device)
    return loss_fn(model(inputs), targets).item()
