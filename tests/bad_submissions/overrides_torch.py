# Bad: wrong answers whose tensors answer torch's checks themselves: a Tensor subclass whose __torch_function__ says yes to torch.allclose, and a torch function mode that does the same for every tensor, entered while the test runs. The tests run outside the kernel, so neither reaches their checks; TinyMLP has the right structure (tanh is caught by test_TinyMLP_learns).
# Expect: looks like tampering.*overrides torch functions for its own tensors \(__torch_function__\)
# Zero: test_TinyMLP_learns, test_predict
# %% replace predict
class _Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.allclose:
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def predict(model, x):
    """Wrong: zeros; eval mode and no_grad only so that the other checks pass."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(x)
    model.train(was_training)
    return torch.zeros_like(out).as_subclass(_Agreeable)
# %% replace TinyMLP
from torch.overrides import TorchFunctionMode


class _AgreeingMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.allclose:
            return True
        return func(*args, **(kwargs or {}))


class TinyMLP(nn.Module):
    """Wrong: tanh, not ReLU, in the middle; its first forward turns on a mode that agrees with any closeness check."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(hidden, out_features)

    def forward(self, x):
        if not getattr(TinyMLP, "_agreeing", False):
            TinyMLP._agreeing = True
            _AgreeingMode().__enter__()       # never left: still on while the test compares
        return self.second(torch.tanh(self.first(x)))
