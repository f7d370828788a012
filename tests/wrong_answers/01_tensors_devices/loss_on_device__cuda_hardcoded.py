# Mistake: ignores the device argument and picks its own (CUDA if present, else the CPU)
import torch


def loss_on_device(model, loss_fn, inputs, targets, device):
    """loss_fn(model(inputs), targets) computed on `device`, as a Python float; the model stays on `device`."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    return loss_fn(model(inputs.to(device)), targets.to(device)).item()
