# Mistake: calls torch.set_grad_enabled(False) as a statement, which turns gradients off for the whole program, not just this call.
def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    out = model(x)
    model.train(was_training)
    return out
