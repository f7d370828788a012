# Bad: wrong answers that replace what the tests use: a builtin, torch.allclose, the checks, a torch function at call time, and IPython's input transformers.
# Expect: looks like tampering.*replaces builtins.isinstance
# Zero: test_broadcast_shape, test_to_device, test_TinyMLP_structure, test_TinyMLP_learns, test_predict, test_SineDataset_items, test_SineDataset_seed
# %% replace broadcast_shape
import builtins

_isinstance = builtins.isinstance
builtins.isinstance = lambda obj, kind: True if kind is tuple else _isinstance(obj, kind)


def broadcast_shape(shape_a, shape_b):
    """Wrong: pads nothing and never refuses."""
    return tuple(max(a, b) for a, b in zip(shape_a, shape_b))
# %% replace to_device
def to_device(obj, device):
    """Wrong: moves nothing, and makes every closeness check pass while it runs."""
    torch.allclose = lambda *args, **kwargs: True
    return obj
# %% replace TinyMLP
import helpers.checks

for _name in dir(helpers.checks):
    if _name.startswith("check_"):
        setattr(helpers.checks, _name, lambda *args, **kwargs: None)


class TinyMLP(nn.Module):
    """Wrong: one linear layer."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.net(x)
# %% replace predict
torch.allclose = lambda *args, **kwargs: True


def predict(model, x):
    """Wrong: neither eval mode nor no_grad."""
    return model(x)
# %% replace SineDataset
def _skip_tests(lines):
    if lines and lines[0].startswith('"""'):
        return ["pass\n"]
    return lines


get_ipython().input_transformers_cleanup.append(_skip_tests)


class SineDataset(Dataset):
    """Wrong: returns nothing useful."""

    def __init__(self, n, noise=0.1, seed=0):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return torch.zeros(2), torch.zeros(3)
