# Mistake: moves tensors inside the caller's lists and dicts in place instead of building a copy.
import torch


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        for k in obj:
            obj[k] = to_device(obj[k], device)
        return obj
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            obj[i] = to_device(v, device)
        return obj
    if isinstance(obj, tuple):
        return tuple(to_device(v, device) for v in obj)
    return obj
