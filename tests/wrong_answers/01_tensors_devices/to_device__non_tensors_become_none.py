# Mistake: forgets the final `return obj`, so every non-tensor leaf (a string, a number, None) comes back as None.
import torch


def to_device(obj, device):
    """A copy of `obj` (tensor, or nested list / tuple / dict) with every tensor moved to `device`."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
