"""Probes for the tests of notebook 06: hooks left behind, and whether autograd was recording.

They observe what a student's function did to the modules it was given; none of them does
an exercise's work. A record a verdict reads is kept apart from the probe handed to that function
(helpers/records.py) and shared with the probe's deep copies (what `copy.deepcopy(model)` runs is
recorded too), and `forward_passes_during` and `global_hooks_in_forward` run the function where
the notebook runs and give the record back as data.
"""

import torch
from torch import nn
from torch.nn.modules import module as _registry

from .notebook_state import asks_notebook
from .records import Record, SharesRecords, grad_enabled, note, recorded


def forward_hooks_on(model: nn.Module) -> int:
    """How many forward hooks and forward pre-hooks are attached to `model` and every module inside it."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


# torch's registries of global forward hooks and pre-hooks, as they were when this module loaded.
_REGISTRIES = (_registry._global_forward_hooks, _registry._global_forward_pre_hooks)


def _global_hooks_now() -> int:
    """How many global forward hooks and pre-hooks are attached: counted with dict's own `len` in torch's registries
    and in anything put in their place since (modules call the hooks of whatever is there; a registry that hides
    its size, issue 38's fifth red team, is counted all the same; one that is not a dict counts as one hook)."""
    now = {id(r): r for r in (*_REGISTRIES, _registry._global_forward_hooks, _registry._global_forward_pre_hooks)}
    return sum(dict.__len__(r) if isinstance(r, dict) else 1 for r in now.values())


@asks_notebook
def global_forward_hooks() -> int:
    """How many global forward hooks and pre-hooks (`register_module_forward_hook`) are attached."""
    return _global_hooks_now()


class GradRecorder(SharesRecords, nn.Module):
    """Runs `inner` and records, in `.seen`, whether autograd was recording during each forward pass (a record kept
    apart from it: helpers/records.py)."""

    seen = Record()

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        note(self, "seen", grad_enabled())
        return self.inner(x)


class SeesGlobalHooks(SharesRecords, nn.Module):
    """Runs `inner` and records, in `.seen`, how many global forward hooks and pre-hooks were attached during
    each forward pass (a hook removed afterwards is still seen: it hooked every module in the process meanwhile).
    The record is kept apart from it (helpers/records.py)."""

    seen = Record()

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        note(self, "seen", _global_hooks_now())
        return self.inner(x)


@asks_notebook
def global_hooks_in_forward(fn, model, *args):
    """`fn(model, *args)` for a SeesGlobalHooks `model`, in the notebook's process, where its record is kept: (what fn
    returned, how many global forward hooks were attached at each forward pass, as a list read after fn returned)."""
    result = fn(model, *args)
    return result, recorded(model, "seen")


class OutOfOrderModel(nn.Module):
    """Defines its layers in one order, runs them in another, and uses one ReLU twice (3 -> 2)."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(6, 2)
        self.act = nn.ReLU()
        self.body = nn.Sequential(nn.Linear(3, 6), nn.Tanh())
        self.unused = nn.Linear(100, 100)

    def forward(self, x):
        return self.head(self.act(self.body(self.act(x))))


class CountsCalls(SharesRecords, nn.Module):
    """One linear layer (2 -> 2) that records the shape of its input at each forward pass in `forwards` (a record kept
    apart from it: helpers/records.py); `calls` is how many there were."""

    forwards = Record()

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(2, 2)

    @property
    def calls(self) -> int:
        return len(self.forwards)

    def forward(self, x):
        note(self, "forwards", tuple(x.shape))
        return self.layer(x)


@asks_notebook
def forward_passes_during(fn, model, *args):
    """`fn(model, *args)` for a CountsCalls `model`, in the notebook's process, where its record is kept: (what fn
    returned, how many forward passes the model ran, read after fn returned)."""
    result = fn(model, *args)
    return result, len(recorded(model, "forwards"))


class FailsAfterLastLayer(nn.Module):
    """An encoder (3 -> 5, ReLU) and a decoder (5 -> 3) whose forward then fails on a shape error."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 5), nn.ReLU())
        self.decoder = nn.Linear(5, 3)

    def forward(self, x):
        h = self.encoder(x)
        return self.decoder(h) + torch.zeros(2)      # a shape error after the last leaf


class OutputShapes:
    """A forward hook that records, in `seen`, the shape of each output it sees."""

    def __init__(self):
        self.seen = []

    def __call__(self, module, inputs, output):
        self.seen.append(tuple(output.shape))
