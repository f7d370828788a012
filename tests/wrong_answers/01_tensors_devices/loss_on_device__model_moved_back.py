# Mistake: moves the model back to the CPU after computing the loss ("tidying up")
def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    model.to(device)
    loss = loss_fn(model(inputs.to(device)), targets.to(device)).item()
    model.cpu()
    return loss
