# Mistake: brings the outputs back to the CPU to compute the loss there (the loss is not computed on the device)
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    model.to(device)
    outputs = model(inputs.to(device)).cpu()
    return loss_fn(outputs, targets).item()
