# Mistake: moves the model and the inputs but leaves the targets on the CPU
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    model = model.to(device)
    outputs = model(inputs.to(device))
    return loss_fn(outputs, targets).item()
