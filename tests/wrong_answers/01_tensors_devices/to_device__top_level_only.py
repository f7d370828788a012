# Mistake: no recursion; tensors nested more than one level deep are left behind.
import torch


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(v.to(device) if isinstance(v, torch.Tensor) else v for v in obj)
    return obj
