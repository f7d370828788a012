# Mistake: turns every number in the batch into a tensor on the device too, so non-tensors do not come back untouched.
import torch


def to_device(obj, device):
    """A copy of `obj` (tensor, or nested list / tuple / dict) with every tensor moved to `device`."""
    if isinstance(obj, (torch.Tensor, int, float)) and not isinstance(obj, bool):
        return torch.as_tensor(obj).to(device)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
    return obj
