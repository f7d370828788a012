# Mistake: one branch for lists and tuples, so every tuple comes back as a list.
import torch


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_device(v, device) for v in obj]
    return obj
