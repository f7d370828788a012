"""Probes for the tests of notebook 06: hooks left behind, and whether autograd was recording.

They observe what a student's function did to the modules it was given; none of them does
an exercise's work.
"""

import torch
from torch import nn
from torch.nn.modules import module as _registry


def forward_hooks_on(model: nn.Module) -> int:
    """How many forward hooks and forward pre-hooks are attached to `model` and every module inside it."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def global_forward_hooks() -> int:
    """How many global forward hooks and pre-hooks (`register_module_forward_hook`) are attached."""
    return len(_registry._global_forward_hooks) + len(_registry._global_forward_pre_hooks)


class GradRecorder(nn.Module):
    """Runs `inner` and records, in `.seen`, whether autograd was recording during each forward pass."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.seen = []

    def forward(self, x):
        self.seen.append(torch.is_grad_enabled())
        return self.inner(x)
