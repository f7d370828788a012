# Mistake: converts the outputs to a NumPy array, so predict no longer returns the model's output tensor.
def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(x)
    model.train(was_training)
    return out.cpu().numpy()
