# Bad: wrong answers that empty the checks in place (their code objects), rebind the test's imported names while a test runs, and replace the grader's own guard.
# Expect: looks like tampering.*replaces the __code__ of
# Expect: looks like tampering.*rebinds names through globals\(\)
# Zero: test_broadcast_shape, test_to_device, test_SineDataset_items, test_SineDataset_seed
# %% replace broadcast_shape
import helpers.checks as _checks

_noop = lambda *args, **kwargs: None  # noqa: E731
for _name in dir(_checks):
    if _name.startswith("check_"):
        getattr(_checks, _name).__code__ = _noop.__code__   # same function objects, empty bodies


def broadcast_shape(shape_a, shape_b):
    """Wrong: always (1,)."""
    return (1,)
# %% replace to_device
def _quiet_checks():
    for name in ("check_type", "check_equal", "check_close", "check_shape", "check_dtype", "check_device"):
        globals()[name] = lambda *args, **kwargs: None


def to_device(obj, device):
    """Wrong: moves nothing, and silences the names the test imported while the test runs."""
    _quiet_checks()
    return obj
# %% replace SineDataset
import re

import helpers.checks as _checks

for _key in [k for k in globals() if re.fullmatch(r"_[0-9a-f]{16}", k)]:
    globals()[_key] = lambda *args, **kwargs: []       # the grader's guard, now answering "nothing replaced"
for _name in dir(_checks):
    if _name.startswith("check_"):
        setattr(_checks, _name, lambda *args, **kwargs: None)


class SineDataset(Dataset):
    """Wrong: all zeros."""

    def __init__(self, n, noise=0.1, seed=0):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.zeros(1), torch.zeros(1)
