# Mistake: keeps only the tensors of each container, so strings, numbers and None vanish from the batch.
import torch


def to_device(obj, device):
    """A copy of `obj` (tensor, or nested list / tuple / dict) with every tensor moved to `device`."""
    def has_tensor(value):
        if isinstance(value, torch.Tensor):
            return True
        if isinstance(value, dict):
            return any(has_tensor(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(has_tensor(v) for v in value)
        return False

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items() if has_tensor(v)}
    if isinstance(obj, list):
        return [to_device(v, device) for v in obj if has_tensor(v)]
    if isinstance(obj, tuple):
        return tuple(to_device(v, device) for v in obj if has_tensor(v))
    return obj
