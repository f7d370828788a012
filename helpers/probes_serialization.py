"""Test machinery of notebook 04 (saving and loading): scratch files, strict reads, a CPU-only
machine, a payload detector and a probe that records where a model was asked to move.

Each function is a few lines a test cell would otherwise repeat; none of them saves or loads a
model the way an exercise asks (the tests call the student's functions for that).

    path = scratch_file("weights.pt")                 # in a folder deleted when Python exits
    state = load_weights_only(path, "the file save_weights wrote")
    check_same_state(state, model.state_dict(), "the saved state_dict")
    moves = record_moves(model)                       # model.to("cpu") appends device('cpu')
    with cpu_only_machine("load_weights of a GPU checkpoint"):
        load_weights(model, gpu_file, "cpu")
    ran = payload_runs(lambda path: load_weights(model, path, "cpu"), model.state_dict())
"""

import builtins
import contextlib
import tempfile
from pathlib import Path
from unittest import mock

import torch
from torch import nn

from helpers.checks import check_close, check_equal, check_type

_SCRATCH = tempfile.TemporaryDirectory(prefix="course-tests-")   # removed when the interpreter exits


def scratch_file(name: str) -> Path:
    """A path called `name` in a temporary folder of this process (nothing is created)."""
    return Path(_SCRATCH.name) / name


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


def payload_runs(load, content: dict) -> bool:
    """Whether `load(path)` runs code hidden in a file at `path` that holds `content` plus a payload.

    The payload sets a flag when unpickled; whatever `load` raises is ignored (refusing is right).
    """
    from helpers.checkpoints import ArbitraryCode

    path = scratch_file("trap.pt")
    builtins._course_payload_ran = False
    try:
        torch.save(dict(content, extra=ArbitraryCode("import builtins; builtins._course_payload_ran = True")), path)
        try:
            load(path)
        except Exception:
            pass
        return builtins._course_payload_ran
    finally:
        del builtins._course_payload_ran
        path.unlink(missing_ok=True)


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
