"""Test machinery of notebook 04 (saving and loading): scratch files, strict reads, a CPU-only
machine, a payload detector, and probes of what a load left on a pretend GPU.

Each function is a few lines a test cell would otherwise repeat; none of them saves or loads a
model the way an exercise asks (the tests call the student's functions for that).

    path = scratch_file("weights.pt")                 # in a folder deleted when Python exits
    state = load_weights_only(path, "the file save_weights wrote")
    check_same_state(state, model.state_dict(), "the saved state_dict")
    devices_after(model, load_weights, model, path, "cpu")   # ["cpu"] when it moved the model there from a GPU
    on_cpu_only_machine("load_weights of a GPU checkpoint", load_weights, model, gpu_file, "cpu")
    ran = payload_runs(model.state_dict(), load_weights, model, TRAP, "cpu")
    result, gpu_states = spy_cuda_rng(load_checkpoint, path, model, optimizer, scheduler, "cpu")
    resumed = resume_on_gpu(load_checkpoint)   # what it left on a pretend GPU: rng, raised, devices

The probes that take a function (on_cpu_only_machine, spy_cuda_rng, resume_on_gpu, devices_after) run
it in the process where the notebook runs (see helpers/notebook_state.py), where torch.cuda is what the
code sees; what they replace there they replace under every name (helpers/patching.py), so code that took
`torch.load` or `torch.cuda.set_rng_state_all` under a name of its own is seen the same. What they decide
from is data the function left (a generator's state, where parameters and buffers are), never a record of
which functions it called.
payload_runs runs where the test runs: it writes the trapped file there, calls the function,
and hears from the payload itself whether it ran (nothing kept where the function runs decides it).
"""

import contextlib
import os
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.utils import _pytree as pytree

from helpers.checks import check_close, check_equal, check_type
from helpers.notebook_state import asks_notebook
from helpers.patching import replaced, returning

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
    with replaced(torch.cuda.is_available, returning(False)):
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

# What the payload does when a loader unpickles it, in the process that loads it. Each way of telling is the
# test's alone, named by a fresh random token, and told before the loader's code can take anything back:
# - under `course grade`, a line to the judge through a one-way pipe out of the sandbox (notebook_state.listener,
#   course/grading/verdicts/notes.py), from the kernel or from any process it starts: nothing written there can
#   be read back, deleted or pushed out by the student's code;
# - a file named by the token beside the trapped file, which crosses back to the grader with the answer;
# - the token in `_HEARD`, for a test run in the notebook's own process (plain nbgrader, a student's check).
_PAYLOAD = """
import os
_pipe = {pipe!r}
if _pipe is not None:
    try:
        _fd = os.open(_pipe, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(_fd, True)
        os.write(_fd, {line!r})
        os.close(_fd)
    except OSError:
        pass
open({marker!r}, "w").close()
try:
    import helpers.probes_serialization
    helpers.probes_serialization._HEARD.add({token!r})
except ImportError:
    pass
"""
_HEARD: set = set()


def payload_runs(content: dict, fn, *args) -> bool:
    """Whether `fn(*args)`, with `TRAP` in `args` replaced by the path of a file that holds `content`
    plus a payload, runs that payload.

    Decided where the test runs, from what the payload told it (see `_PAYLOAD`), never from a flag kept where
    `fn` runs; whatever `fn` raises is ignored (refusing is right), except the grader's own loss of the
    notebook (ConnectionError, TimeoutError).
    """
    import secrets

    from helpers import notebook_state
    from helpers.checkpoints import ArbitraryCode

    token = f"payload-{secrets.token_hex(16)}"
    listener = notebook_state.listener or _PipeHere()
    listener.expect(token)
    path = scratch_file("trap.pt")
    marker = path.parent / token
    payload = _PAYLOAD.format(pipe=listener.path, line=f"\n{token}\n".encode(), token=token, marker=str(marker))
    torch.save(dict(content, extra=ArbitraryCode(payload)), path)
    try:
        try:
            fn(*(path if type(arg) is str and arg == TRAP else arg for arg in args))
        except (ConnectionError, TimeoutError):
            raise
        except Exception:
            pass
        return listener.heard(token) or token in _HEARD or marker.exists()
    finally:
        if isinstance(listener, _PipeHere):
            listener.close()
        _HEARD.discard(token)
        path.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)


class _PipeHere:
    """Where no grader listens (plain nbgrader, a student's own check): a pipe of this process that the payload
    writes into through /proc (from this process or one it starts); none on a system without /proc."""

    LIMIT = 1 << 20     # bytes read back at most

    def __init__(self):
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)
        self.path = f"/proc/{os.getpid()}/fd/{self.write_end}" if os.path.isdir("/proc/self/fd") else None

    def expect(self, token: str) -> None:
        pass

    def heard(self, token: str) -> bool:
        data = b""
        with contextlib.suppress(BlockingIOError, OSError):
            while len(data) < self.LIMIT:
                chunk = os.read(self.read_end, 1 << 16)
                if not chunk:
                    break
                data += chunk
        return token in data.decode("ascii", "replace").split("\n")

    def close(self) -> None:
        os.close(self.read_end)
        os.close(self.write_end)


@contextlib.contextmanager
def _one_gpu_machine(restored: list):
    """A pretend one-GPU machine (`torch.cuda.is_available()` True, `device_count()` 1) whose GPU generator
    only notes the states handed to it (`torch.cuda.set_rng_state_all` or `set_rng_state`, by any name) in
    `restored`, as (GPU index, state) pairs."""
    def on_the_cpu(state):      # PyTorch's own check: a GPU generator takes its state as a CPU ByteTensor
        if isinstance(state, torch.Tensor) and state.device.type != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor (pretend GPU: this state is on a GPU)")
        return state

    def set_all(original, new_states):
        restored.extend((i, on_the_cpu(state)) for i, state in enumerate(new_states))

    def set_one(original, new_state, device="cuda"):
        device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
        restored.append((device.index or 0, on_the_cpu(new_state)))

    from helpers.pretend_cuda import switching_devices

    with replaced(torch.cuda.is_available, returning(True)), replaced(torch.cuda.device_count, returning(1)), \
            replaced(torch.cuda.set_rng_state_all, set_all), replaced(torch.cuda.set_rng_state, set_one), \
            switching_devices():
        yield


@asks_notebook
def spy_cuda_rng(fn, *args) -> tuple:
    """`fn(*args)` on a pretend one-GPU machine whose GPU generator only notes what it is given: `fn`'s result,
    and the states handed to GPU 0's generator, in order (CPU copies of what was given; what is not a tensor
    is left out)."""
    restored: list = []
    with _one_gpu_machine(restored):
        result = fn(*args)
    return result, [state.detach().cpu().clone() for index, state in restored
                    if index == 0 and isinstance(state, torch.Tensor)]


def _devices(tensors) -> list[str]:
    """The devices `tensors` say they are on, sorted, each once ("cpu", "cuda:0")."""
    return sorted({str(t.device) for t in tensors})


@asks_notebook
def devices_after(model, fn, *args) -> list[str]:
    """`fn(*args)` on a pretend one-GPU machine, with `model` (one of `args`) on its GPU first: the devices the
    model's parameters and buffers say they are on afterwards. Asked to load onto the CPU, a function that moves
    the model leaves ["cpu"]; one that only loads weights into it leaves ["cuda:0"] (helpers/pretend_cuda.py).

    Nothing here watches a call: the parameters' device is what the function left.
    """
    from helpers.pretend_cuda import moving_to_pretend_gpu

    with _one_gpu_machine([]), moving_to_pretend_gpu():
        model.to("cuda")
        fn(*args)
    return _devices([*model.parameters(), *model.buffers()])


def _state_on_pretend_gpu(state):
    """The generator state `state` as if torch.load had put it on a GPU: its `.device` says cuda:0, and handed to
    `torch.set_rng_state` or a generator's `set_state` as it is, PyTorch's own check refuses it (TypeError), as a
    real GPU tensor is refused; `.cpu()`, `.to("cpu")`, `.to(cpu_tensor)`, `.type_as(cpu_tensor)` or
    `.type(torch.ByteTensor)` give the plain CPU state back.
    What else is made from it stays on the GPU, as on a real one (`.byte()`, `.to(torch.uint8)`, `.clone()`; not
    `torch.as_tensor(state, dtype=...)`, which PyTorch converts without asking the tensor). (Its numbers are kept
    as int16, which that check refuses, and which reads as uint8 through `.dtype`.)"""
    from helpers.pretend_cuda import LooksOnCUDA, _names, _towards_cpu

    def names_a_cpu_type(args, kwargs) -> bool:       # .type(torch.ByteTensor) or .type("torch.ByteTensor")
        named = args[1] if len(args) > 1 else kwargs.get("dtype")
        name = named if isinstance(named, str) else \
            f"{getattr(named, '__module__', '')}.{getattr(named, '__name__', '')}"
        return isinstance(named, (str, type)) and name.startswith("torch.") and not name.startswith("torch.cuda.")

    class StateOnPretendGPU(LooksOnCUDA):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__self__", None) is torch.Tensor.dtype:
                return torch.uint8
            to_cpu = func is torch.Tensor.cpu or (func is torch.Tensor.type and names_a_cpu_type(args, kwargs)) or (
                func in (torch.Tensor.to, torch.Tensor.type_as) and _names(_towards_cpu, args, kwargs))
            if to_cpu:
                with torch._C.DisableTorchFunctionSubclass():
                    return args[0].as_subclass(torch.Tensor).to(torch.uint8).clone()
            out = super().__torch_function__(func, types, args, kwargs)
            if isinstance(out, torch.Tensor):       # made from it, in any dtype: still on the GPU
                with torch._C.DisableTorchFunctionSubclass():
                    return out.as_subclass(torch.Tensor).to(torch.int16).as_subclass(cls)
            return out

    return state.detach().to(torch.int16).as_subclass(StateOnPretendGPU)


def _names_cuda(map_location) -> bool:
    """Does torch.load's `map_location` put a tensor saved on the CPU on a GPU? None (where it was saved), "cpu",
    and a function (it could go anywhere: not counted against the student) do not."""
    if isinstance(map_location, dict):
        map_location = map_location.get("cpu")
    if isinstance(map_location, (str, torch.device)):
        return torch.device(map_location).type == "cuda"
    return False


# The CPU generator state in the checkpoint `resume_on_gpu` hands over: one no test run has by chance.
GPU_RESUME_RNG = torch.Generator().manual_seed(20261203).get_state()


@asks_notebook
def resume_on_gpu(fn) -> dict:
    """`fn(path, model, optimizer, scheduler, "cuda")` on a pretend one-GPU machine, as after a crash: the model,
    optimizer and scheduler just built on the CPU, the checkpoint saved after a step (the optimizer has momentum
    buffers). torch.load puts what it reads on the (pretend) GPU when its map_location names one, the checkpoint's
    'rng' (`GPU_RESUME_RNG`) included; the GPU generators' restores only note what they are given. What `fn` left:

        {"rng": the CPU generator's state right after, "raised": the name of what fn raised or None,
         "model": the devices of the model's parameters, "optimizer state": the devices of its momentum buffers}

    Nothing here watches a call. A generator state left on the GPU is refused by PyTorch's own check, by whichever
    function it is handed to; `optimizer.load_state_dict` puts each buffer on its parameter's device as it is at
    that moment, so buffers loaded before the model moved stay on the CPU (helpers/pretend_cuda.py).
    The generator's state is put back afterwards.
    """
    from helpers.pretend_cuda import moving_to_pretend_gpu, on_pretend_gpu

    before = torch.get_rng_state()
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    saved_optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(2, 3)).sum().backward()
    saved_optimizer.step()
    path = scratch_file("gpu_rng_checkpoint.pt")
    torch.save({"epoch": 0, "model": model.state_dict(), "optimizer": saved_optimizer.state_dict(),
                "scheduler": torch.optim.lr_scheduler.StepLR(saved_optimizer, step_size=2).state_dict(),
                "rng": GPU_RESUME_RNG, "cuda_rng": [GPU_RESUME_RNG.clone()]}, path)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)

    def load(original, f, *args, **kwargs):      # where map_location puts it: on the (pretend) GPU when it names one
        where = args[0] if args else kwargs.get("map_location")
        args = args[1:] if args else args
        kwargs.pop("map_location", None)
        loaded = original(f, "cpu", *args, **kwargs)
        if not _names_cuda(where):
            return loaded
        on_gpu = pytree.tree_map(lambda v: on_pretend_gpu(v) if isinstance(v, torch.Tensor) else v, loaded)
        if isinstance(loaded, dict) and isinstance(loaded.get("rng"), torch.Tensor):
            on_gpu["rng"] = _state_on_pretend_gpu(loaded["rng"])
        return on_gpu

    raised = None
    try:
        with _one_gpu_machine([]), moving_to_pretend_gpu(), replaced(torch.load, load):
            try:
                fn(path, model, optimizer, scheduler, "cuda")
            except Exception as error:
                raised = type(error).__name__
        return {"rng": torch.get_rng_state(), "raised": raised, "model": _devices(model.parameters()),
                "optimizer state": _devices(v for state in optimizer.state.values() for v in state.values()
                                            if isinstance(v, torch.Tensor))}
    finally:
        torch.set_rng_state(before)
        path.unlink(missing_ok=True)
