"""Probes for notebook 03's tests: they record what a student's training step did, as data.

- `AutocastProbe()`: a small model (4 -> 16 -> 3) that records, at each forward pass,
  `(autocast enabled, autocast dtype)` for its input's device type in `.seen`.
- `autocast_in_forward(fn, model, *args, cuda_machine=False)`: `fn(model, *args)` for an `AutocastProbe`, where the
  notebook runs (on a machine with a pretend GPU when `cuda_machine`): `(what fn returned, what the model saw)`.
- `ScaleBy1024()`: stands in for an enabled `torch.amp.GradScaler` with a fixed scale of 1024;
  it scales the loss, divides the gradients back before stepping, and records its calls in
  `.calls`, and in `.inside_autocast` the backward pass, `step` and `update` it saw run with autocast on.
- `through_scaler(fn, model, x, y, loss_fn, optimizer)`: `fn(model, x, y, loss_fn, optimizer, scaler)` for a fresh
  `ScaleBy1024`, where the notebook runs: `(what fn returned, a ScalerRecord of what the scaler saw)`.

The records a verdict reads are kept apart from the probe handed to the code under test (helpers/records.py), and
the helpers that run that code return them as data, read from the probe they handed over (kept under its identity).
- `StepProbe()`: a classifier (32 -> 256 -> 256 -> 8) that records, at each forward pass, `(autocast enabled,
  autocast dtype)` for its input's device type in `.seen`, and in `.backward_autocast`, when backward
  reaches its output, whether autocast was on then (for any device type).
- `step_on_pretend_gpu(fn, use_autocast, held=0, old_peak=0, seed=0)`: `fn(model, x, y, loss_fn, use_autocast)`
  for a `StepProbe` and a batch of 512 made from `seed` on a fresh pretend GPU whose counters follow the
  tensors made (helpers.pretend_cuda, `follows_tensors=True`), `held` bytes held there before and an older
  peak `old_peak` on record: `(what fn returned, a StepRecord of what the model saw)`.
- `check_parameters_close(model, expected, what)`: `model` has the parameters of `expected`, by name (none
  missing: a model emptied by the code under test fails), each with its dtype and (within `atol`) values.
"""

import functools
from dataclasses import dataclass

import torch
from torch import nn

from helpers.checks import check_close, check_dtype, check_equal
from helpers.notebook_state import asks_notebook
from helpers.records import Probe, Record, SharesRecords, autocast_dtype, autocast_enabled, autocast_on, note, recorded


class AutocastProbe(SharesRecords, nn.Module):
    """A small classifier that records whether autocast was on, and in which dtype, at each forward.
    Its record is kept apart from it and shared by its deep copies (helpers/records.py)."""

    seen = Record()

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        kind = x.device.type
        note(self, "seen", (autocast_enabled(kind), autocast_dtype(kind)))
        return self.net(x)


@asks_notebook
def autocast_in_forward(fn, model, *args, cuda_machine: bool = False):
    """`fn(model, *args)` for an AutocastProbe `model`, in the notebook's process, with a pretend CUDA device
    installed when `cuda_machine` (helpers.pretend_cuda): (what fn returned, what the model saw at each forward
    pass, `(autocast enabled, autocast dtype)`, as a list read after fn returned where the record is kept)."""
    from helpers.pretend_cuda import PretendCUDA

    result = PretendCUDA().run(fn, model, *args) if cuda_machine else fn(model, *args)
    return result, recorded(model, "seen")


class StepProbe(SharesRecords, nn.Module):
    """A classifier that records the autocast state at each forward pass, and when backward reaches its output.
    Its records are kept apart from it (helpers/records.py: the step under test is handed the model)."""

    seen = Record()
    backward_autocast = Record()

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 8))

    def forward(self, x):
        kind = x.device.type
        note(self, "seen", (autocast_enabled(kind), autocast_dtype(kind)))
        out = self.net(x)
        if out.requires_grad:
            out.register_hook(functools.partial(StepProbe._backward_reaches_output, self))
        return out

    def _backward_reaches_output(self, grad):
        note(self, "backward_autocast", autocast_on())


def step_batch(seed: int = 0, batch_size: int = 512):
    """A StepProbe's batch: inputs (batch_size, 32) and class labels 0..7, made from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch_size, 32, generator=generator), torch.randint(0, 8, (batch_size,), generator=generator)


@dataclass(frozen=True)
class StepRecord:
    """What a StepProbe saw during a step: (autocast enabled, autocast dtype) at each forward pass, and at each
    backward through its output whether autocast was on then."""

    seen: list
    backward_autocast: list


@asks_notebook
def step_on_pretend_gpu(fn, use_autocast, held: int = 0, old_peak: int = 0, seed: int = 0):
    """`fn(model, x, y, nn.CrossEntropyLoss(), use_autocast)` for a fresh StepProbe and batch on a fresh pretend GPU
    that follows tensors: (what fn returned, a StepRecord of what the model saw, read after fn returned). All of it
    in the notebook's process, where the model's records are kept (helpers/records.py)."""
    from helpers.pretend_cuda import PretendCUDA, on_pretend_gpu

    torch.manual_seed(seed)
    model = on_pretend_gpu(StepProbe())
    x, y = (on_pretend_gpu(t) for t in step_batch(seed))
    gpu = PretendCUDA(held=held, old_peak=old_peak, follows_tensors=True)
    result = gpu.run(fn, model, x, y, nn.CrossEntropyLoss(), use_autocast)
    return result, StepRecord(seen=recorded(model, "seen"), backward_autocast=recorded(model, "backward_autocast"))


class ScaleBy1024(Probe):
    """An enabled GradScaler with a fixed scale of 1024 that records what it is asked to do. Its records are kept
    apart from it (helpers/records.py: the step under test is handed the scaler)."""

    SCALE = 1024.0
    calls = Record()
    inside_autocast = Record()    # "backward", "step", "update": each one run with autocast on

    def __init__(self):
        self._unscaled = False

    def _note_autocast(self, what: str) -> None:
        if autocast_on():
            note(self, "inside_autocast", what)

    def is_enabled(self):
        return True

    def get_scale(self):
        return self.SCALE

    def scale(self, loss):
        note(self, "calls", "scale")
        scaled = loss * self.SCALE
        if scaled.requires_grad:      # backward starts at the scaled loss: note where it runs
            scaled.register_hook(functools.partial(ScaleBy1024._backward_starts, self))
        return scaled

    def _backward_starts(self, grad):
        ScaleBy1024._note_autocast(self, "backward")

    def unscale_(self, optimizer):
        note(self, "calls", "unscale_")
        ScaleBy1024._unscale(self, optimizer)

    def _unscale(self, optimizer):
        if not self._unscaled:   # once per step, as GradScaler does
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.div_(self.SCALE)
            self._unscaled = True

    def step(self, optimizer, *args, **kwargs):
        note(self, "calls", "step")
        ScaleBy1024._note_autocast(self, "step")
        ScaleBy1024._unscale(self, optimizer)
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        note(self, "calls", "update")
        ScaleBy1024._note_autocast(self, "update")
        self._unscaled = False


@dataclass(frozen=True)
class ScalerRecord:
    """What a ScaleBy1024 saw during a step: the methods called on it, in order, and which of the backward pass,
    `step` and `update` ran with autocast on."""

    calls: list
    inside_autocast: list


@asks_notebook
def through_scaler(fn, model, x, y, loss_fn, optimizer):
    """`fn(model, x, y, loss_fn, optimizer, scaler)` for a fresh ScaleBy1024 `scaler`, in the notebook's process,
    where the scaler's records are kept: (what fn returned, a ScalerRecord of what the scaler saw, read after fn
    returned). The model and the optimizer come back changed as any argument does."""
    scaler = ScaleBy1024()
    result = fn(model, x, y, loss_fn, optimizer, scaler)
    return result, ScalerRecord(calls=recorded(scaler, "calls"), inside_autocast=recorded(scaler, "inside_autocast"))


def check_parameters_close(model, expected, what: str, atol: float = 1e-5) -> None:
    """`model` has `expected`'s parameters, by name, each with the same dtype and values."""
    check_equal([name for name, _ in model.named_parameters()], [name for name, _ in expected.named_parameters()],
                f"the names of the model's parameters {what}")
    for (name, p), q in zip(model.named_parameters(), expected.parameters(), strict=True):
        check_dtype(p, q.dtype, f"parameter {name} {what}")
        check_close(p, q, f"parameter {name} {what}", atol=atol)


class StepCounter:
    """An optimizer step hook (`optimizer.register_step_post_hook(counter)`) that counts the steps in `count`."""

    def __init__(self):
        self.count = 0

    def __call__(self, optimizer, args, kwargs) -> None:
        self.count += 1


def check_stale_gradients_cleared(model, expected, stale, what: str) -> None:
    """`model` has the parameters of `expected` (a step from cleared gradients), and a failure says so when it has
    those of `stale` instead (the same step with the gradients left over from before added in)."""
    __tracebackhide__ = True
    from helpers.checks import _failure

    def same(a, b):
        return all(torch.allclose(p.detach().float(), q.detach().float(), atol=1e-5)
                   for p, q in zip(a.parameters(), b.parameters()))

    if same(model, stale) and not same(model, expected):
        raise _failure(f"the parameters {what}", "a step on this batch's gradient alone",
                       "a step on that gradient plus the one left in .grad from before",
                       "Gradients add up until cleared: call optimizer.zero_grad() first")
    check_parameters_close(model, expected, what)


def hand_step(model, x, y, clear: bool = True, lr: float = 0.5):
    """A copy of `model` after one bfloat16-autocast step by hand (cross-entropy, SGD(lr)), its gradients cleared
    first or (clear=False) left as they are: the reference of a mixed precision step, made before the answer's."""
    import copy

    twin = copy.deepcopy(model)
    for mine, theirs in zip(twin.parameters(), model.parameters()):   # a deep copy of a probe leaves .grad behind
        mine.grad = None if theirs.grad is None else theirs.grad.detach().clone()
    if clear:
        twin.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(twin(x), y)
    loss.backward()
    torch.optim.SGD(twin.parameters(), lr=lr).step()
    return twin
