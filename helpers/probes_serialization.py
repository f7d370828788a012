"""Test machinery of notebook 04 (saving and loading): scratch files, strict reads, a CPU-only
machine, a payload detector and a probe that records where a model was asked to move.

Each function is a few lines a test cell would otherwise repeat; none of them saves or loads a
model the way an exercise asks (the tests call the student's functions for that).

    path = scratch_file("weights.pt")                 # in a folder deleted when Python exits
    state = load_weights_only(path, "the file save_weights wrote")
    check_same_state(state, model.state_dict(), "the saved state_dict")
    moves = record_moves(model)                       # model.to("cpu") appends device('cpu')
    on_cpu_only_machine("load_weights of a GPU checkpoint", load_weights, model, gpu_file, "cpu")
    ran = payload_runs(model.state_dict(), load_weights, model, TRAP, "cpu")
    result, restores = spy_cuda_rng(load_checkpoint, path, model, optimizer, scheduler, "cpu")

The last three run the function they are given in the process where the notebook runs (see
helpers/notebook_state.py), where a payload would run and torch.cuda is what the code sees.
"""

import builtins
import contextlib
import tempfile
from pathlib import Path
from unittest import mock

import torch
from torch import nn

from helpers.checks import check_close, check_equal, check_type
from helpers.notebook_state import asks_notebook

# One scratch folder per temporary folder in use (a grader changes it between notebooks), each
# removed when the interpreter exits.
_SCRATCH: dict[str, tempfile.TemporaryDirectory] = {}


def scratch_file(name: str) -> Path:
    """A path called `name` in a temporary folder of this process (nothing is created)."""
    base = tempfile.gettempdir()
    if base not in _SCRATCH or not Path(_SCRATCH[base].name).is_dir():
        _SCRATCH[base] = tempfile.TemporaryDirectory(prefix="course-tests-")
    return Path(_SCRATCH[base].name) / name


def load_weights_only(path, what: str):
    """`torch.load(path, weights_only=True)`, or an AssertionError that names `what` and the refusal."""
    if not Path(path).is_file():
        raise AssertionError(f"{what}: expected a file at {Path(path).name}, got no file")
    try:
        return torch.load(path, weights_only=True)
    except Exception as error:
        raise AssertionError(f"torch.load(path, weights_only=True) on {what}: expected it to load, got "
                             f"{type(error).__name__} (a pickled object, not only tensors and plain containers?)"
                             ) from None


def check_same_state(got, expected: dict, what: str) -> None:
    """`got` is a dict with `expected`'s keys, in the same order, and a close tensor under each."""
    check_type(got, dict, f"{what} (a state_dict: a dict of names to tensors)")
    check_equal(list(got), list(expected), f"the keys of {what}")
    for name, tensor in expected.items():
        check_close(got[name], tensor, f"{name!r} in {what}")


@contextlib.contextmanager
def cpu_only_machine(what: str):
    """Inside, `torch.cuda.is_available()` is False, even on a GPU machine; a RuntimeError raised
    inside (the one torch.load gives for a GPU tensor without map_location) becomes an
    AssertionError that starts with `what`."""
    with mock.patch("torch.cuda.is_available", return_value=False):
        try:
            yield
        except NotImplementedError:
            raise
        except RuntimeError as error:
            raise AssertionError(f"{what} on a CPU-only machine: expected it to load, "
                                 f"got RuntimeError: {error}") from None


@asks_notebook
def on_cpu_only_machine(what: str, fn, *args):
    """`fn(*args)` inside `cpu_only_machine(what)`."""
    with cpu_only_machine(what):
        return fn(*args)


TRAP = "<the trapped file>"     # in payload_runs' arguments, stands for the file's path


@asks_notebook
def payload_runs(content: dict, fn, *args) -> bool:
    """Whether `fn(*args)`, with `TRAP` in `args` replaced by the path of a file that holds `content`
    plus a payload, runs that payload.

    The payload sets a flag when unpickled; whatever `fn` raises is ignored (refusing is right).
    """
    from helpers.checkpoints import ArbitraryCode

    path = scratch_file("trap.pt")
    builtins._course_payload_ran = False
    try:
        torch.save(dict(content, extra=ArbitraryCode("import builtins; builtins._course_payload_ran = True")), path)
        try:
            fn(*(path if type(arg) is str and arg == TRAP else arg for arg in args))
        except Exception:
            pass
        return builtins._course_payload_ran
    finally:
        del builtins._course_payload_ran
        path.unlink(missing_ok=True)


@asks_notebook
def spy_cuda_rng(fn, *args) -> tuple:
    """`fn(*args)` on a pretend one-GPU machine whose `torch.cuda.set_rng_state_all` and `set_rng_state`
    only count their calls: `fn`'s result, and how many times either was called."""
    with mock.patch("torch.cuda.is_available", return_value=True), \
            mock.patch("torch.cuda.set_rng_state_all") as set_all, mock.patch("torch.cuda.set_rng_state") as set_one:
        result = fn(*args)
    return result, set_all.call_count + set_one.call_count


class _RecordsMoves:
    """Mixed into a module's class: every `.to(...)`, `.cuda()` and `.cpu()` is noted in `moves`."""

    def to(self, *args, **kwargs):
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
        if device is not None:
            self.moves.append(torch.device(device))
        return super().to(*args, **kwargs)

    def cuda(self, device=None):
        self.moves.append(torch.device("cuda", device) if isinstance(device, int) else torch.device(device or "cuda"))
        return super().cuda(device)

    def cpu(self):
        self.moves.append(torch.device("cpu"))
        return super().cpu()


class MovesRecorded(_RecordsMoves, nn.Sequential):
    """An `nn.Sequential` that notes every device it is asked to move to (its state_dict is unchanged)."""


def record_moves(model: nn.Sequential) -> list:
    """Turn `model`, an `nn.Sequential`, into a `MovesRecorded` in place; returns its list of moves.

    On a CPU a model asked to move to "cpu" stays where it is, so only the request shows that a
    function would also have moved it to a GPU: the list holds one `torch.device` per request.
    """
    if type(model) is not nn.Sequential:
        raise TypeError(f"record_moves needs an nn.Sequential, got {type(model).__name__}")
    model.__class__ = MovesRecorded
    model.moves = []
    return model.moves


def check_moved(moves: list, device, what: str) -> None:
    """The last move recorded by `record_moves` was to `device`."""
    expected = torch.device(device)
    got = moves[-1] if moves else "no move (the model stays where it was: call model.to(device))"
    if got != expected:
        raise AssertionError(f"the device the model was last moved to by {what}: expected {expected}, got {got}")
