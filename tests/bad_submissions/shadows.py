# Bad: wrong answers whose cells hide what the tests use behind the notebook's own names and torch's own classes: notebook-level sum, len and sorted whose results equal anything (the tests run with the real ones), nn.Dropout.forward and nn.BatchNorm1d.forward edited in place through an alias, and a new dtype property on torch.Tensor that calls float64 float32. Outside the kernel the tests see none of it, but the edited Dropout and BatchNorm1d are how the notebook's own predict behaves there, so predict is judged by what it does in that process (the scan flags the cell); the lying dtype makes SineDataset's tensors unreadable, so both its tests score zero.
# Zero: test_TinyMLP_structure, test_TinyMLP_learns, test_SineDataset_items, test_SineDataset_seed
# %% replace TinyMLP
class _Agree(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


class _AgreeList(list):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


import builtins as _b


def sum(*args, **kwargs):
    return _Agree(_b.sum(*args, **kwargs))


def len(obj):
    return _Agree(_b.len(obj))


def sorted(*args, **kwargs):
    return _AgreeList(_b.sorted(*args, **kwargs))


class TinyMLP(nn.Module):
    """Wrong: one linear layer."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.net(x)
# %% replace predict
import torch.nn.functional as _F

for _cls in (nn.Dropout,):
    _cls.forward = lambda self, x: x
for _cls in (nn.BatchNorm1d,):
    _cls.forward = lambda self, x: _F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                                 False, 0.0, self.eps)


def predict(model, x):
    """Wrong: never switches to eval mode."""
    with torch.no_grad():
        return model(x)
# %% replace SineDataset
_T = torch.Tensor
_real_dtype = torch._C.TensorBase.dtype
_T.dtype = property(lambda self: torch.float32 if _real_dtype.__get__(self) is torch.float64 else _real_dtype.__get__(self))


class SineDataset(Dataset):
    """Wrong: float64."""

    def __init__(self, n, noise=0.1, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, 1, generator=generator, dtype=torch.float64) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, 1, generator=generator, dtype=torch.float64)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
