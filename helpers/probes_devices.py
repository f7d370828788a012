"""Stand-ins that let notebook 01's tests see device moves on a CPU-only machine.

`DeviceProbe` and `LossProbe`: a model and a loss function that record on which devices their
inputs and weights were when they were called. The `meta` device stands in for an accelerator:
moving to it is a real move that needs no GPU.

`GradModeProbe` and `grad_mode_in_forward(fn, model, *args)`: a model that records whether autograd was
recording at each forward pass, and `fn(model, *args)` run where the notebook runs, giving back
`(what fn returned, that record)` as data.

The probes' records are kept apart from them (helpers/records.py): code handed a probe can read a record,
never set or change it.

`without_broadcast_shapes(broadcast_shape, a, b)`: the answer run, where the notebook runs, with
`torch.broadcast_shapes` and numpy's refused (the task forbids calling them).
"""


import torch
from torch import nn

from helpers.notebook_state import asks_notebook
from helpers.patching import replaced
from helpers.records import Record, SharesRecords, grad_enabled, note, recorded


def _distinct(records: list) -> list:
    """`records` without repeats, in the order they first appeared."""
    return [r for i, r in enumerate(records) if r not in records[:i]]


class DeviceProbe(SharesRecords, nn.Module):
    """A one-layer model that records, at each call, where its weight and its input were.

    `seen` is a list of dicts `{"weight": "meta", "inputs": "meta"}` (device types as text), one per
    call; `places` the same without repeats. Its output has the input's batch size and device, and
    is all zeros: where it runs is what counts. `seen` is kept apart from the probe and shared by its
    deep copies (helpers/records.py).
    """

    seen = Record()

    def __init__(self, in_features: int = 3, out_features: int = 1):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        note(self, "seen", {"weight": self.linear.weight.device.type, "inputs": x.device.type})
        return torch.zeros(x.shape[0], self.linear.out_features, device=x.device)

    @property
    def places(self) -> list:
        return _distinct(self.seen)


class LossProbe(SharesRecords):
    """A loss function that records where its two arguments were and returns `value` as a CPU scalar.

    `seen` is a list of dicts `{"outputs": "meta", "targets": "meta"}`, one per call; `places` the same
    without repeats. It returns a CPU tensor even
    for meta inputs, so a caller can turn the result into a number (a meta tensor holds none).
    `seen` is kept apart from the probe and shared by its deep copies (helpers/records.py).
    """

    seen = Record()

    def __init__(self, value: float = 0.25):
        self.value = value

    def __call__(self, outputs, targets):
        note(self, "seen", {"outputs": outputs.device.type, "targets": targets.device.type})
        return torch.tensor(self.value)

    @property
    def places(self) -> list:
        return _distinct(self.seen)


class GradModeProbe(SharesRecords, nn.Module):
    """A one-layer model (4 -> 2) that records, at each call, whether autograd was recording.

    `seen` is a list of `torch.is_grad_enabled()` values, one per forward pass, kept apart from the probe
    and shared by its deep copies (helpers/records.py), so a function that predicts with
    `copy.deepcopy(model)` is seen too.
    """

    seen = Record()

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, x):
        note(self, "seen", grad_enabled())
        return self.linear(x)


@asks_notebook
def grad_mode_in_forward(fn, model, *args):
    """`fn(model, *args)` for a GradModeProbe `model`, in the notebook's process, where the model's record is kept:
    (what fn returned, whether autograd was recording at each forward pass, as a list read after fn returned)."""
    result = fn(model, *args)
    return result, recorded(model, "seen")


def _forbidden_broadcast_shapes(original, *shapes):
    raise AssertionError("broadcast_shape called torch.broadcast_shapes (or numpy's): the task forbids it (work the "
                         "rule out yourself; use torch.broadcast_shapes only to check your answer)")


@asks_notebook
def without_broadcast_shapes(fn, *args):
    """`fn(*args)` with `torch.broadcast_shapes` and `numpy.broadcast_shapes` (the same rule, issue 38's fifth red
    team) raising an AssertionError that says the task forbids calling them, under any name (`from torch import
    broadcast_shapes` too: helpers/patching.py); run where the notebook runs."""
    import numpy

    with replaced(torch.broadcast_shapes, _forbidden_broadcast_shapes), \
            replaced(numpy.broadcast_shapes, _forbidden_broadcast_shapes):
        return fn(*args)
