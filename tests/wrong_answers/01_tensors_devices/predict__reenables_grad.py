# Mistake: switches gradients off and back on globally, so a call made inside torch.no_grad() turns them on
import torch


def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    outputs = model(x)
    torch.set_grad_enabled(True)
    model.train(was_training)
    return outputs
