"""Test machinery of notebook 05 (data and model parallelism): replicas, the single-device step
they must reproduce, and checks of where a split model's layers and outputs live.

    replicas, optimizers = replicas_of(model, 2, lr=0.1)          # copies, each with its own SGD
    loss = step_on_whole_batch(single, single_optimizer, x, y, loss_fn)
    check_replicas_match(replicas, single, "after one step")
    check_stage_devices(layers, cut=2, devices=("cpu", "meta"), what="a 4-layer model")
    out = forward_or_fail(split, x, "the split model's forward on a CPU input")
    ranks = gradients_in_ranks(average_gradients, model, shards, loss_fn)   # a real process group
    check_ranks_finished(ranks, "average_gradients")

Both check lists the test keeps to itself (`layers = list(model)` before the call; the code under test gets
`list(replicas)`): what that code does to the model or list it was given (layers emptied, reordered or
swapped, replicas replaced) cannot change which objects are checked.

`gradients_in_ranks` runs where the notebook runs (helpers/notebook_state.py): it forks one process per
shard (helpers/process_group.py), and each rank sees its own shard only, so a function that does not
communicate cannot give the gradient of the whole batch.
"""

import copy

import torch
from torch import nn

from helpers.checks import check_close, check_device
from helpers.notebook_state import asks_notebook
from helpers.process_group import DEFAULT_TIMEOUT_S, RankResult, run_ranks



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


@asks_notebook
def gradients_in_ranks(fn, model: nn.Module, shards, loss_fn, timeout_s: float = DEFAULT_TIMEOUT_S) -> list:
    """Run `fn(model)` in every rank of a real gloo process group of `len(shards)` processes, after a backward
    pass on that rank's own shard; one `RankResult` per rank, whose value is `{"grads": [...], "params": [...]}`:
    each parameter's `.grad` (None where it has none) and value after `fn`, in the order of `model.parameters()`.

    Rank r zeroes a copy of `model`'s gradients and calls `loss_fn(model(x_r), y_r).backward()` on `shards[r]`
    alone. Runs where the notebook runs (the ranks are forks of its process); at most `timeout_s` seconds.
    Raises NotImplementedError when `fn` raised it in every rank (an exercise not written yet).
    """
    def one_rank(rank: int, world_size: int) -> dict:
        x, y = shards[rank]
        for p in model.parameters():
            p.grad = None
        loss_fn(model(x), y).backward()
        fn(model)
        params = list(model.parameters())
        return {"grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
                "params": [p.detach().clone() for p in params]}

    results = run_ranks(one_rank, world_size=len(shards), timeout_s=timeout_s)
    if all(r.error_type == "NotImplementedError" for r in results):
        # Not written yet: said as the notebook's own cells say it (a test cell shows TODO, not a failure).
        raise NotImplementedError(f"{getattr(fn, '__name__', 'the function')} raised NotImplementedError in every rank")
    return results


def check_ranks_finished(results: list[RankResult], what: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """An AssertionError naming each rank that raised (with its error) or never finished, else nothing."""
    raised = [r for r in results if r.error is not None]
    if raised:
        errors = "; ".join(f"rank {r.rank}: {r.error[:400]}" for r in raised)
        raise AssertionError(f"{what} raised in {len(raised)} of {len(results)} ranks: expected it to run in every "
                             f"rank of the process group, got {errors}")
    stuck = [r.rank for r in results if not r.finished]
    if stuck:
        done = [r.rank for r in results if r.finished]
        raise AssertionError(
            f"{what} never returned in rank(s) {stuck} (stopped after {timeout_s:g} s)"
            + (f", while rank(s) {done} finished" if done else "")
            + ": a collective such as dist.all_reduce waits until every rank of the group has called it; "
              "expected every rank to make the same collective calls, in the same order")


def check_rank_gradients(results: list[RankResult], expected_grads, expected_params, what: str,
                         atol: float = 1e-6) -> None:
    """Every rank's gradients close to `expected_grads` (None where a parameter has no gradient) and its
    parameters equal to `expected_params`, both lists in the order of the model's parameters (the test's own)."""
    for r in results:
        grads, params = r.value["grads"], r.value["params"]
        for i, (got, expected) in enumerate(zip(grads, expected_grads, strict=True)):
            if expected is None or got is None:
                if (got is None) != (expected is None):
                    raise AssertionError(f"{what}: the .grad of parameter {i} on rank {r.rank}: expected "
                                         f"{'None' if expected is None else 'a tensor'}, got "
                                         f"{'None' if got is None else 'a tensor'}")
                continue
            check_close(got, expected, f"the .grad of parameter {i} on rank {r.rank} after {what}, vs the gradient "
                                       "of one model on the whole batch", atol=atol)
        for i, (got, expected) in enumerate(zip(params, expected_params, strict=True)):
            check_close(got, expected, f"parameter {i} on rank {r.rank} after {what} (only the gradients may change)",
                        atol=0.0, rtol=0.0)
