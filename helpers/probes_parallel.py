"""Test machinery of notebook 05 (data and model parallelism): replicas, the single-device step
they must reproduce, and checks of where a split model's layers and outputs live.

    replicas, optimizers = replicas_of(model, 2, lr=0.1)          # copies, each with its own SGD
    loss = step_on_whole_batch(single, single_optimizer, x, y, loss_fn)
    check_replicas_match(replicas, single, "after one step")
    check_stage_devices(layers, cut=2, devices=("cpu", "meta"), what="a 4-layer model")
    out = forward_or_fail(split, x, "the split model's forward on a CPU input")

Both check lists the test keeps to itself (`layers = list(model)` before the call; the code under test gets
`list(replicas)`): what that code does to the model or list it was given (layers emptied, reordered or
swapped, replicas replaced) cannot change which objects are checked.
"""

import copy

import torch
from torch import nn

from helpers.checks import check_close, check_device


def replicas_of(model: nn.Module, count: int, **sgd_options):
    """`count` deep copies of `model` and, for each, its own `torch.optim.SGD(**sgd_options)`."""
    replicas = [copy.deepcopy(model) for _ in range(count)]
    return replicas, [torch.optim.SGD(r.parameters(), **sgd_options) for r in replicas]


def step_on_whole_batch(model: nn.Module, optimizer, x, y, loss_fn) -> float:
    """One ordinary training step of `model` on the whole batch: what data parallelism must reproduce."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def check_replicas_match(replicas, single: nn.Module, what: str, atol: float = 1e-6) -> None:
    """Every replica's parameters are close to `single`'s, name by name (`replicas`: the test's own list)."""
    for r, replica in enumerate(replicas):
        for (name, p), q in zip(replica.named_parameters(), single.parameters(), strict=True):
            check_close(p, q, f"replica {r}'s {name} {what} vs one model on the whole batch", atol=atol)


def check_stage_devices(layers, cut: int, devices, what: str) -> None:
    """Of a model's `layers` (taken by the test before the call), those before `cut` hold their parameters on
    devices[0], the others on devices[1]."""
    for i, layer in enumerate(layers):
        for name, p in layer.named_parameters():
            check_device(p, devices[0] if i < cut else devices[1], f"{name} of layer {i} of {what}")


def forward_or_fail(module: nn.Module, x, what: str):
    """`module(x)`, or an AssertionError naming `what` when it raises the RuntimeError of a tensor on
    the wrong device (a move that is missing)."""
    try:
        return module(x)
    except NotImplementedError:
        raise
    except RuntimeError as error:
        raise AssertionError(f"{what}: expected it to run, with every tensor moved to the device of the layer "
                             f"that uses it, got RuntimeError: {error}") from None
