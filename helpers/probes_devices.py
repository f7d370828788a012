"""Stand-ins that let notebook 01's tests see device choices and device moves on a CPU-only machine.

- `pretend_machine(cuda, mps)`: torch answers "which devices are there?" as such a machine would.
- `DeviceProbe` and `LossProbe`: a model and a loss function that record on which devices their
  inputs and weights were when they were called. The `meta` device stands in for an accelerator:
  moving to it is a real move that needs no GPU.
"""

import contextlib
from unittest import mock

import torch
from torch import nn


@contextlib.contextmanager
def pretend_machine(cuda: bool, mps: bool):
    """Inside this block, every way torch offers to ask for an accelerator says `cuda` / `mps`.

    Patched: `torch.cuda.is_available`, `device_count` and `current_device`,
    `torch.backends.mps.is_available`, `torch.mps.is_available`, and, where this torch has them,
    `torch.accelerator.is_available`, `device_count`, `current_device_index` and
    `current_accelerator` (CUDA wins when both are set, as one build has one).
    """
    kind = "cuda" if cuda else "mps" if mps else None

    def current_accelerator(check_available=False):
        return torch.device(kind) if kind else None

    with contextlib.ExitStack() as stack:
        patch = lambda target, value, create=False: stack.enter_context(  # noqa: E731
            mock.patch(target, value, create=create))
        patch("torch.cuda.is_available", lambda: cuda)
        patch("torch.cuda.device_count", lambda: int(cuda))
        patch("torch.cuda.current_device", lambda: 0)   # a real call fails where torch has no CUDA
        patch("torch.backends.mps.is_available", lambda: mps)
        patch("torch.mps.is_available", lambda: mps, create=True)
        if getattr(torch, "accelerator", None) is not None:   # torch 2.6 and later
            patch("torch.accelerator.is_available", lambda: kind is not None)
            patch("torch.accelerator.device_count", lambda: int(kind is not None))
            patch("torch.accelerator.current_accelerator", current_accelerator)
            patch("torch.accelerator.current_device_index", lambda: 0)
        yield


def _distinct(records: list) -> list:
    """`records` without repeats, in the order they first appeared."""
    return [r for i, r in enumerate(records) if r not in records[:i]]


def device_on(pick, cuda: bool, mps: bool):
    """What `pick()` returns on a pretend machine with (or without) CUDA and MPS."""
    with pretend_machine(cuda=cuda, mps=mps):
        return pick()


class DeviceProbe(nn.Module):
    """A one-layer model that records, at each call, where its weight and its input were.

    `seen` is a list of dicts `{"weight": "meta", "inputs": "meta"}` (device types as text), one per
    call; `places` the same without repeats. Its output has the input's batch size and device, and
    is all zeros: where it runs is what counts.
    """

    def __init__(self, in_features: int = 3, out_features: int = 1):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.seen = []

    def forward(self, x):
        self.seen.append({"weight": self.linear.weight.device.type, "inputs": x.device.type})
        return torch.zeros(x.shape[0], self.linear.out_features, device=x.device)

    @property
    def places(self) -> list:
        return _distinct(self.seen)


class LossProbe:
    """A loss function that records where its two arguments were and returns `value` as a CPU scalar.

    `seen` is a list of dicts `{"outputs": "meta", "targets": "meta"}`, one per call; `places` the same
    without repeats. It returns a CPU tensor even
    for meta inputs, so a caller can turn the result into a number (a meta tensor holds none).
    """

    def __init__(self, value: float = 0.25):
        self.value = value
        self.seen = []

    def __call__(self, outputs, targets):
        self.seen.append({"outputs": outputs.device.type, "targets": targets.device.type})
        return torch.tensor(self.value)

    @property
    def places(self) -> list:
        return _distinct(self.seen)
