# Mistake: restores the mode by assigning model.training, which changes only the top module: its dropout layer stays in eval mode.
def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(x)
    model.training = was_training
    return out
