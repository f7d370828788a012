"""Probes for training-loop code: a model and a loader that record what a loop did with each batch,
and a meter of the memory autograd keeps for a backward pass.

Tests hand the probes to a student's function and judge the records; nothing here trains or
evaluates anything itself. The records are kept apart from the probes (helpers/records.py: filed under each
probe itself, read as copies, never set by the code the probes are handed to), and a test reads them as data
from `probes_during`, which runs the function where the notebook runs and returns what the probes saw (plain
data: lists of bools, tuples and `Call`s, in a `LoopRecord`), so they reach a test that runs outside the
notebook's process (see course/grading/verdicts/remote.py).

    probe, loader = LoopProbe(nn.Linear(3, 1)), probe_loader(x, y, batch_size=4)
    result, seen = probes_during(train_one_epoch, probe, loader, probe.loss(nn.MSELoss()), optimizer, device)
    seen.calls       # one Call(moved, training, grad_enabled) per forward pass
    seen.unmoved     # ["y of batch 2 (pass 0)", "x of forward pass 0", ...]: batches whose .to() was never
                     # called, then what reached the model or the loss without .to(device)
"""

import weakref
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.data import TensorDataset

from helpers.notebook_state import asks_notebook
from helpers.records import Probe, Record, SharesRecords, grad_enabled, note, recorded, share


class UnmovedBatch(torch.Tensor):
    """A batch tensor as `probe_loader` yields it. Its `.to(...)` notes in its loader's record `moved` that
    it was called and returns a plain tensor, so both the loader and whoever receives the batch can
    tell whether it went through `.to(device)` (on a CPU, moving to the CPU changes nothing else
    that could be seen). What is computed from it before the move (`x.detach()`, `x.clone()`,
    `x.float()`) is the same batch: its `.to(...)` counts for it too."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs or {})
        log = next((a._moved_log for a in args if isinstance(a, UnmovedBatch) and "_moved_log" in a.__dict__), None)
        if log is not None:
            for t in result if isinstance(result, (tuple, list)) else (result,):
                if isinstance(t, UnmovedBatch) and "_moved_log" not in t.__dict__:
                    t._moved_log = log
        return result

    def to(self, *args, **kwargs):
        loader, key = getattr(self, "_moved_log", (None, None))
        if isinstance(loader, ProbeLoader):
            note(loader, "moved", key)
        return torch.Tensor.to(self.as_subclass(torch.Tensor), *args, **kwargs)


class ProbeLoader(Probe):
    """What a loop uses of a `DataLoader`: iteration over `(x, y)` batches in order, `len()` (the
    number of batches), `.dataset` and `.batch_size`. Every batch it yields is an `UnmovedBatch`;
    `unmoved()` names those whose `.to()` was never called. Its records (the batches yielded, and which were
    moved) are kept apart from it (helpers/records.py)."""

    moved = Record()         # (batch number, "x" or "y") whose .to() was called
    _yielded = Record()      # the number of each batch yielded, over every pass

    def __init__(self, x: torch.Tensor, y: torch.Tensor, batch_size: int):
        self.dataset, self.batch_size = TensorDataset(x, y), batch_size
        self._batches = [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, len(x), batch_size)]

    @property
    def yielded(self) -> int:
        """Batches yielded so far, over every pass."""
        return len(self._yielded)

    def __iter__(self):
        for xb, yb in self._batches:   # fresh objects each pass: .to() on one pass leaves no trace on the next
            batch = (xb.clone().as_subclass(UnmovedBatch), yb.clone().as_subclass(UnmovedBatch))
            number = self.yielded
            for name, t in zip("xy", batch):
                t._moved_log = (self, (number, name))
            note(self, "_yielded", number)
            yield batch

    def __len__(self) -> int:
        return len(self._batches)

    def unmoved(self) -> list[str]:
        """The x and y of every batch yielded so far whose `.to(...)` was never called."""
        return _unmoved_batches(self)


def _unmoved_batches(loader: ProbeLoader) -> list[str]:
    moved = set(recorded(loader, "moved"))
    return [f"{name} of batch {i % len(loader)} (pass {i // len(loader)})"
            for i in range(len(recorded(loader, "_yielded"))) for name in "xy" if (i, name) not in moved]


def probe_loader(x: torch.Tensor, y: torch.Tensor, batch_size: int) -> ProbeLoader:
    """Batches of `batch_size` rows of `x` and `y` (the last one shorter), in order, not shuffled."""
    return ProbeLoader(x, y, batch_size)


@dataclass(frozen=True)
class Call:
    """One forward pass as the probe saw it."""
    moved: bool          # the input went through .to(...) since the loader yielded it
    training: bool       # model.training
    grad_enabled: bool   # torch.is_grad_enabled()


class LoopProbe(SharesRecords, nn.Module):
    """Wraps `inner` (its outputs are `inner`'s) and records a `Call` for each forward pass;
    `loss(base)` gives a loss function that records whether each target was moved. The records are kept apart
    from the probe and shared by its deep copies and its loss functions (helpers/records.py): a loop that runs
    `copy.deepcopy(model)` is seen too."""

    calls = Record()            # a Call per forward pass
    targets_moved = Record()    # per call of a loss function from `loss(...)`: were its targets moved
    graphs_held = Record()      # at each forward pass, before it runs: how many of those losses held their graph
    _graphs = Record()          # a weak reference to the graph node of each loss from `loss(...)`

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    @property
    def losses_alive(self) -> int:
        """How many losses from `loss(...)` still hold their graph, now."""
        return sum(node() is not None for node in self._graphs)

    def forward(self, x):
        note(self, "calls", Call(not isinstance(x, UnmovedBatch), self.training, grad_enabled()))
        note(self, "graphs_held", self.losses_alive)
        return self.inner(x.as_subclass(torch.Tensor))

    def loss(self, base) -> "ProbeLoss":
        """`base` (e.g. `nn.MSELoss()`), recording for each call whether its targets were moved."""
        return ProbeLoss(self, base)

    def unmoved(self) -> list[str]:
        """Which inputs (`x`) and targets (`y`) reached the model or the loss without `.to(device)`."""
        return _unmoved_inputs(self.calls, self.targets_moved)


def _unmoved_inputs(calls: list, targets_moved: list) -> list[str]:
    return ([f"x of forward pass {i}" for i, call in enumerate(calls) if not call.moved]
            + [f"y of loss call {i}" for i, moved in enumerate(targets_moved) if not moved])


class ProbeLoss(SharesRecords):
    """A loss function (`base`) that notes in its probe's record `targets_moved` whether each call's targets were
    moved. It files its records with the probe it was made for, bound when it is made (or unpickled): its `probe`
    attribute, set to another, changes nothing."""

    def __init__(self, probe: LoopProbe, base):
        self.probe, self.base = probe, base
        share(self, probe)

    def __setstate__(self, state):
        self.__dict__.update(state)
        if state.get("probe") is not None:
            share(self, state["probe"])

    def __call__(self, outputs, targets):
        note(self, "targets_moved", not isinstance(targets, UnmovedBatch))
        loss = self.base(outputs.as_subclass(torch.Tensor), targets.as_subclass(torch.Tensor))
        return _Traced.apply(loss, self) if loss.requires_grad else loss


class _Traced(torch.autograd.Function):
    """The loss unchanged, with a node in its graph (this function's own) that its loss function's records hold a
    weak reference to: the graph's life is counted, from nothing the loss or its graph holds."""

    @staticmethod
    def forward(ctx, loss, loss_fn):
        note(loss_fn, "_graphs", weakref.ref(ctx))
        return loss.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def check_losses_let_go(seen: "LoopRecord", what: str) -> None:
    """While the loop ran, no more than one earlier loss held its graph when a batch began (the last batch's
    `loss`, until the name is reused), and none after it returned: losses were summed as `.detach()` or
    `.item()`, not as tensors with their graphs. `seen`: what `probes_during` (or a LoopProbe, read where it ran)
    saw."""
    __tracebackhide__ = True
    from helpers.checks import _failure

    held = max(seen.graphs_held, default=0)
    if held > 1 or seen.losses_alive > 0:
        where = (f"{held} earlier batches' losses still held their graph when a batch began" if held > 1 else
                 f"{seen.losses_alive} losses still held their graph after it returned")
        raise _failure(f"{what}: the autograd graphs kept alive by the losses", "each freed with its batch", where,
                       "Adding up `loss` itself keeps every batch's graph: add `loss.detach()` (or `loss.item()`)")


def slope_problem(val_slope: float, lr: float = 0.01, weight: float = 0.0):
    """A tiny, exactly reproducible fit problem: `(model, train_loader, val_loader, optimizer, scheduler)`.

    The model is `LoopProbe(nn.Linear(1, 1, bias=False))` with its weight at `weight`; the training
    data lie on y = 2x (5 samples, batches of 2, 2, 1), the validation data on y = val_slope * x
    (3 samples, batches of 2, 1), both in `probe_loader`s; the optimizer is `SGD(lr=lr)` and the
    scheduler `StepLR(step_size=2, gamma=0.5)`.
    """
    model = LoopProbe(nn.Linear(1, 1, bias=False))
    nn.init.constant_(model.inner.weight, weight)
    x_train = torch.tensor([[1.0], [2.0], [3.0], [1.5], [2.5]])
    x_val = -torch.tensor([[1.0], [2.0], [3.0]])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, probe_loader(x_train, 2 * x_train, 2), probe_loader(x_val, val_slope * x_val, 2), optimizer, scheduler


class SavedActivations:
    """Counts the bytes autograd saves for backward while the `with` block runs: `peak` is the most
    held at any one moment (memory you pay for), `total` the sum of everything ever saved.

    Each saved tensor is counted from when autograd saves it until its graph is freed, which is
    when nothing refers to the graph's outputs any more.
    """

    def __init__(self):
        self.live = self.peak = self.total = 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor):
        return _Held(self, tensor)

    @staticmethod
    def _unpack(held):
        return held.tensor

    def _add(self, num_bytes: int) -> None:
        self.live += num_bytes
        self.total += max(num_bytes, 0)
        self.peak = max(self.peak, self.live)

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


_NEVER_RECORDED = {torch.ops.aten.detach.default, torch.ops.aten.alias.default}


class _GraphOps(TorchDispatchMode):
    """Counts the torch operations that run with autograd recording and an input that requires grad: each one joins
    an autograd graph and keeps what its backward needs. Counted below autograd, where torch dispatches each operation
    to its kernel: code that switches torch-function modes off (`torch._C.DisableTorchFunction()`, issue 38's fifth
    red team) is counted all the same; whether autograd records is read through `grad_enabled`
    (helpers/records.py)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # What autograd records: an operation with an input that requires grad and a floating result (an argmax or a
        # comparison is not differentiable), other than detaching (`.data`, `.detach()`: what copy.deepcopy of a
        # model does, outside no_grad, in a correct answer).
        if grad_enabled() and func not in _NEVER_RECORDED \
                and any(isinstance(t, torch.Tensor) and t.requires_grad for t in pytree.tree_leaves((args, kwargs))) \
                and any(isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())
                        for t in pytree.tree_leaves(out)):
            self.count += 1
        return out


@asks_notebook
def graph_ops_during(fn, *args) -> int:
    """How many torch operations built autograd graph while `fn(*args)` ran, counted where it runs (in the
    notebook's process, see helpers/notebook_state.py): 0 under `torch.no_grad()` or `torch.inference_mode()`.

    Read from torch's own dispatch of each operation (a mode on its stack), not from `saved_tensors_hooks`:
    hooks nest, and a function's own hooks inside would hide what it saved.
    """
    with _GraphOps() as ops:
        fn(*args)
    return ops.count


class _Held:
    """One saved tensor, counted while autograd keeps it."""

    def __init__(self, meter: SavedActivations, tensor: torch.Tensor):
        # detached: an output saved for its own backward would otherwise hold its graph in a cycle,
        # freed only by the garbage collector, and the count would lag behind the real memory
        self.meter, self.tensor = meter, tensor.detach()
        self.num_bytes = tensor.numel() * tensor.element_size()
        meter._add(self.num_bytes)

    def __del__(self):
        self.meter._add(-self.num_bytes)


class RecordingSGD(Probe, torch.optim.SGD):
    """Plain SGD that records, at each `step()`, the gradient it is about to apply: in `gradients`, one list
    of floats per step (every parameter's `.grad`, flattened, in order; zeros for a missing one). A test can
    then tell a step that used its own batch's gradient from one that used the sum of several (no
    `zero_grad`) or none at all (`zero_grad` between `backward` and `step`). The record is kept apart from the
    optimizer (helpers/records.py)."""

    gradients = Record()

    def __init__(self, params, lr: float = 0.0):
        super().__init__(params, lr=lr)

    @torch.no_grad()
    def step(self, closure=None):
        flat = []
        for group in self.param_groups:
            for p in group["params"]:
                flat += (p.grad if p.grad is not None else torch.zeros_like(p)).detach().flatten().tolist()
        note(self, "gradients", flat)
        return super().step(closure)

    # torch wraps an optimizer class's `step` for its profiler when the first one is made, by setting it on the
    # class; this class is Sealed (helpers/records.py), so it is wrapped here, as torch would, once.
    step = torch.optim.Optimizer.profile_hook_step(step)
    step.hooked = True


@dataclass(frozen=True)
class LoopRecord:
    """What the probes handed to a loop saw while it ran (`probes_during`): the LoopProbe's `Call` at each forward
    pass, whether the targets of each call of its loss function were moved, how many losses held their graph at
    each forward pass and after the loop returned, the gradient each `RecordingSGD.step()` applied, and the
    batches of the ProbeLoaders (in the order they were handed over) whose `.to()` was never called."""

    calls: list
    targets_moved: list
    graphs_held: list
    losses_alive: int
    gradients: list
    unmoved_batches: list

    @property
    def unmoved_inputs(self) -> list:
        """Which inputs (`x`) and targets (`y`) reached the model or the loss without `.to(device)`."""
        return _unmoved_inputs(self.calls, self.targets_moved)

    @property
    def unmoved(self) -> list:
        """The loaders' batches never moved, then what reached the model or the loss unmoved."""
        return self.unmoved_batches + self.unmoved_inputs


@asks_notebook
def probes_during(fn, *args):
    """`fn(*args)` in the notebook's process, where the records of the probes among `args` are kept: (what fn
    returned, a LoopRecord of what they saw, read after fn returned from the probes handed over: the first
    LoopProbe, else the first ProbeLoss, every ProbeLoader and the first RecordingSGD). The arguments come back
    changed as any argument does."""
    first = [a for a in args if isinstance(a, LoopProbe)] + [a for a in args if isinstance(a, ProbeLoss)] + [None]
    loaders = [a for a in args if isinstance(a, ProbeLoader)]
    optimizers = [a for a in args if isinstance(a, RecordingSGD)] + [None]
    result = fn(*args)
    probe, optimizer = first[0], optimizers[0]
    graphs = recorded(probe, "_graphs") if probe is not None else []
    return result, LoopRecord(
        calls=recorded(probe, "calls") if probe is not None else [],
        targets_moved=recorded(probe, "targets_moved") if probe is not None else [],
        graphs_held=recorded(probe, "graphs_held") if probe is not None else [],
        losses_alive=sum(node() is not None for node in graphs),
        gradients=recorded(optimizer, "gradients") if optimizer is not None else [],
        unmoved_batches=[name for loader in loaders for name in _unmoved_batches(loader)])


def batch_gradients(model: nn.Module, loss_fn, batches) -> list[list[float]]:
    """The gradient of each batch's loss alone at `model`'s current weights (nothing changed), as `RecordingSGD`
    records them."""
    grads = []
    for x, y in batches:
        parameters = list(model.parameters())
        with torch.enable_grad():
            got = torch.autograd.grad(loss_fn(model(x), y), parameters, allow_unused=True)
        grads.append([v for g, p in zip(got, parameters) for v in (g if g is not None else torch.zeros_like(p))
                      .flatten().tolist()])
    return grads


def check_step_gradients(seen: list, per_batch: list, what: str) -> None:
    """Each `optimizer.step()` (as `RecordingSGD` saw it) applied its own batch's gradient (`per_batch`, in order),
    one step per batch; a failure names the classic bug behind it."""
    __tracebackhide__ = True
    from helpers.checks import _failure, check_equal

    check_equal(len(seen), len(per_batch), f"{what}: the number of optimizer.step() calls for {len(per_batch)} batches")
    summed = [0.0] * len(per_batch[0]) if per_batch else []

    def close(a, b):
        return len(a) == len(b) and torch.allclose(torch.tensor(a), torch.tensor(b), rtol=1e-4, atol=1e-6)

    for k, (got, own) in enumerate(zip(seen, per_batch)):
        summed = [s + v for s, v in zip(summed, own)]
        if close(got, own):
            continue
        if k > 0 and close(got, summed):
            raise _failure(f"{what}: the gradient optimizer.step() applied for batch {k}",
                           "that batch's own gradient", f"the sum of the gradients of batches 0 to {k}",
                           "Gradients add up in .grad until they are cleared: call optimizer.zero_grad() before "
                           "each backward()")
        if not any(got):
            raise _failure(f"{what}: the gradient optimizer.step() applied for batch {k}",
                           "that batch's own gradient", "all zeros",
                           "optimizer.zero_grad() between backward() and step() wipes the gradient before it is "
                           "used: call it before backward()")
        raise _failure(f"{what}: the gradient optimizer.step() applied for batch {k}", "that batch's own gradient "
                       "(zero_grad, forward, loss, backward, step)", "another gradient")
