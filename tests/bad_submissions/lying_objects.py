# Bad: wrong answers that return objects lying about themselves or that change a check from inside: a fake device and fake tensors whose __class__ says torch.device or torch.Tensor, a Tensor subclass whose own detach() hands check_close its expected tensor, and a module-level `tuple` added to helpers.checks so that every shape compares equal.
# Expect: cell \d+ \(to_device\) looks like tampering.*claims to be of another class \(__class__\)
# Zero: test_to_device, test_TinyMLP_learns, test_SineDataset_items
# %% replace to_device
class _Same(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


class _AnyDevice:
    """Not a device at all."""

    @property
    def __class__(self):
        return torch.device

    type = _Same("cpu")
    index = None


class _Moved:
    """Wrong: wraps the tensor and says it moved."""

    def __init__(self, t):
        self._t = t
        self.shape = t.shape

    @property
    def __class__(self):
        return torch.Tensor

    device = _AnyDevice()


def to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return _Moved(obj)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
    return obj
# %% replace TinyMLP
class _Mirror(torch.Tensor):
    def detach(self):
        try:
            raise RuntimeError
        except RuntimeError as error:
            caller = error.__traceback__.tb_frame.f_back
        expected = caller.f_locals.get("expected_t")
        if expected is not None:
            return expected.clone()
        return torch.Tensor.detach(self)


class TinyMLP(nn.Module):
    """Wrong: tanh in the middle."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.second = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.second(torch.tanh(self.first(x))).as_subclass(_Mirror)
# %% replace SineDataset
import helpers.checks as _hc

vars(_hc).update(tuple=lambda *args: ())


class SineDataset(Dataset):
    """Wrong: each x and y has two values."""

    def __init__(self, n, noise=0.1, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, 2, generator=generator) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, 2, generator=generator)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, index):
        return self.x[index], self.y[index]
