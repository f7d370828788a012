# Mistake: moves the batch but not the model (the weights stay on the CPU)
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    outputs = model(inputs.to(device))
    return loss_fn(outputs, targets.to(device)).item()
