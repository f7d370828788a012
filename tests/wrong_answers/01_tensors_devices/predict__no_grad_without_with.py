# Mistake: calls torch.no_grad() on its own line, which creates the context manager and throws it away: gradients stay on.
def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    was_training = model.training
    model.eval()
    torch.no_grad()
    out = model(x)
    model.train(was_training)
    return out
