# Bad: wrong answers rescued below torch's Python functions: a numpy array subclass whose __array_ufunc__ answers np.equal with True, a torch dispatch mode left on that answers aten.allclose with True, and hooks on every torch module that switch models to eval mode while autograd is off. Outside the kernel no check meets them; TinyMLP has the right structure (tanh is caught by test_TinyMLP_learns), and the hooks on every module are how the notebook's own predict behaves in its process, so it is judged by that (the scan flags the cell).
# Expect: cell \d+ \(to_device\) looks like tampering.*__array_ufunc__
# Zero: test_to_device, test_TinyMLP_learns
# %% replace to_device
import numpy as _np


class _Whatever(_np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return True


def to_device(obj, device):
    """Wrong: non-tensors are lost."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
    return _np.zeros(()).view(_Whatever)
# %% replace TinyMLP
from torch.utils._python_dispatch import TorchDispatchMode


class _Yes(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.allclose.default:
            return True
        return func(*args, **(kwargs or {}))


_Yes().__enter__()          # never left


class TinyMLP(nn.Module):
    """Wrong: tanh in the middle."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.second(torch.tanh(self.first(x)))
# %% replace predict
import torch.nn.modules.module as _mm

_modes = {}


def _pre(module, inputs):
    if not torch.is_grad_enabled():
        _modes[id(module)] = module.training
        module.training = False


def _post(module, inputs, output):
    if id(module) in _modes:
        module.training = _modes.pop(id(module))


_mm.register_module_forward_pre_hook(_pre)
_mm.register_module_forward_hook(_post)


def predict(model, x):
    """Wrong: never switches to eval mode."""
    with torch.no_grad():
        return model(x)
