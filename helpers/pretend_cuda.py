"""A pretend CUDA device for tests of code that reads PyTorch's CUDA memory counters (notebook 03).

It behaves like PyTorch's caching allocator where that matters for memory counters: the
counters change on the host, at the moment a tensor is allocated or freed, whether or not the
GPU has finished the kernels that use it. `synchronize()` only waits for queued kernels, so it
changes no counter. What a student may rely on:

- `PretendCUDA(held=..., old_peak=..., workspace=..., available=True)`: `held` bytes are allocated
  when it starts (a real GPU holds the weights and the batch before a pass), and the peak counter
  remembers an older, larger peak (`old_peak`) until it is reset. `workspace` bytes are allocated by
  the first kernel and kept from then on, as cuBLAS does with its workspace on the first matrix
  product (8 MiB, 32 MiB on Hopper GPUs).
- `gpu.run_kernel(keep=..., temporary=...)`: what a piece of work does to the allocator:
  allocates the workspace if no kernel has yet, then `keep + temporary` bytes, queues a kernel,
  frees `temporary` (the output, `keep`, stays allocated). Both happen at once, on the host.
- `gpu.kernel(keep=..., temporary=...)`: that piece of work as a function of no arguments, to hand
  to the code under test; `nothing` is work that does nothing.
- `gpu.run(fn, *args)`: `fn(*args)` with this device installed, in the process where the code
  under test runs (helpers.notebook_state), its answer returned.
- `with gpu.installed():` replaces `torch.cuda.is_available`, `synchronize`,
  `reset_peak_memory_stats` (and its old alias `reset_max_memory_allocated`),
  `max_memory_allocated`, `memory_allocated`, `memory_reserved`, `max_memory_reserved`,
  `memory_stats`, `empty_cache`, `current_device`, `device_count` and `current_stream` by this
  device's own, in `torch.cuda` and `torch.cuda.memory`, so that such code runs on any machine.
- `gpu.calls`: what was asked of it, in order ("synchronize", "reset", "kernel", ...).
- `PretendCUDA(available=False)`: a machine without CUDA, as PyTorch's CPU build behaves there:
  `is_available()` is False, `device_count()` 0, the memory counters read 0,
  `synchronize`, `current_device` and `current_stream` fail with an AssertionError and
  `reset_peak_memory_stats` with an AttributeError (not the RuntimeError a careful function
  raises itself).
- `on_pretend_gpu(obj)`: a tensor, or a module's parameters and buffers, as they would be after
  `.to("cuda")`: their `.device` says `cuda:0` (`.is_cuda` True, `.get_device()` 0), their
  numbers stay on the CPU (`LooksOnCUDA`). What is computed from them is a plain CPU tensor; `.to`
  or `.cuda()` towards CUDA keeps them as they are, `.cpu()` or `.to("cpu")` gives them on the CPU.
- `with moving_to_pretend_gpu():` data on the CPU moved towards CUDA lands on the pretend GPU, and a
  module moved either way says where its parameters now are. With a `PretendCUDA` installed, code that takes
  autocast's device type from such data runs CUDA autocast (its CPU kernels are not cast, unless
  the device follows tensors, below).
- `PretendCUDA(follows_tensors=True, ...)`: while it is installed, its memory counters follow the real
  bytes of the tensors made there (each new storage, rounded up to 512 bytes as the CUDA allocator
  does, counted when an operation creates it and freed when the last tensor using it goes; views and
  in-place results are not new memory), on top of `held`; `run_kernel` still adds its own. And CUDA
  autocast really casts: entering `torch.autocast("cuda", dtype=...)` (any spelling) also enters CPU
  autocast with the same dtype, so that the CPU kernels of data on the pretend GPU run in 16 bits, with
  the CPU's list of operations autocast casts. Such a device supports bfloat16 as well as float16.
"""

import contextlib
import weakref
from unittest import mock

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from .notebook_state import asks_notebook
from .patching import replaced, returning

# The allocator reserves memory from the GPU in blocks; the pretend one rounds up to 2 MiB.
RESERVE_BLOCK = 2 * 2**20
# The CUDA caching allocator rounds every allocation up to a multiple of 512 bytes.
ALLOCATION_ROUNDING = 512

_PATCHED = ("is_available", "synchronize", "reset_peak_memory_stats", "reset_max_memory_allocated",
            "max_memory_allocated", "memory_allocated", "memory_reserved", "max_memory_reserved",
            "memory_stats", "empty_cache", "current_device", "device_count", "current_stream")


class _Stream:
    """What `torch.cuda.current_stream()` returns: it can be synchronized and queried."""

    def __init__(self, gpu):
        self._gpu = gpu

    def synchronize(self):
        self._gpu.synchronize()

    def query(self):
        return self._gpu.queued == 0


class PretendCUDA:
    """One pretend CUDA device whose memory counters behave like PyTorch's caching allocator."""

    def __init__(self, held: int = 0, old_peak: int = 0, available: bool = True, workspace: int = 0,
                 follows_tensors: bool = False):
        self.available = available
        self.follows_tensors = follows_tensors
        self.workspace = workspace   # allocated by the first kernel, then kept
        self.workspace_allocated = False
        self.allocated = held
        self.peak = max(held, old_peak)
        self.reserved = self._round_up(self.peak)
        self.peak_reserved = self.reserved
        self.queued = 0          # kernels launched and not yet waited for
        self.calls: list[str] = []

    @staticmethod
    def _round_up(nbytes: int) -> int:
        return -(-nbytes // RESERVE_BLOCK) * RESERVE_BLOCK

    def _need(self, what: str) -> None:
        self.calls.append(what)
        if not self.available:
            if what == "reset":   # the CPU build has no such counter to reset
                raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats' "
                                     "(pretend CUDA: this machine has none)")
            raise AssertionError("Torch not compiled with CUDA enabled (pretend CUDA: this machine has none)")

    # What work does to the allocator (the host side), not a torch.cuda function.
    def allocate(self, nbytes: int) -> None:
        self.allocated += nbytes
        self.peak = max(self.peak, self.allocated)
        self.reserved = max(self.reserved, self._round_up(self.allocated))
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def free(self, nbytes: int) -> None:
        self.allocated -= nbytes      # the block goes back to the cache: reserved stays

    def run_kernel(self, keep: int = 0, temporary: int = 0) -> None:
        """A piece of work: its output (`keep` bytes) stays, its temporary buffers are freed at once."""
        self._need("kernel")
        if not self.workspace_allocated:
            self.allocate(self.workspace)
            self.workspace_allocated = True
        self.allocate(keep + temporary)
        self.queued += 1
        self.free(temporary)

    def kernel(self, keep: int = 0, temporary: int = 0) -> "Kernel":
        """`run_kernel(keep, temporary)` as a function of no arguments."""
        return Kernel(self, keep, temporary)

    @asks_notebook
    def run(self, fn, *args):
        """`fn(*args)` with this device installed."""
        with self.installed():
            return fn(*args)

    # The torch.cuda functions this device answers.
    def is_available(self) -> bool:
        self.calls.append("is_available")
        return self.available

    def device_count(self) -> int:
        return 1 if self.available else 0

    def current_device(self) -> int:
        self._need("current_device")
        return 0

    def synchronize(self, device=None) -> None:
        self._need("synchronize")
        self.queued = 0           # waits for the kernels; no counter changes

    def current_stream(self, device=None) -> _Stream:
        self._need("current_stream")
        return _Stream(self)

    def reset_peak_memory_stats(self, device=None) -> None:
        self._need("reset")
        self.peak = self.allocated
        self.peak_reserved = self.reserved

    def max_memory_allocated(self, device=None) -> int:
        self.calls.append("max_memory_allocated")
        return self.peak if self.available else 0

    def memory_allocated(self, device=None) -> int:
        self.calls.append("memory_allocated")
        return self.allocated if self.available else 0

    def memory_reserved(self, device=None) -> int:
        self.calls.append("memory_reserved")
        return self.reserved if self.available else 0

    def max_memory_reserved(self, device=None) -> int:
        self.calls.append("max_memory_reserved")
        return self.peak_reserved if self.available else 0

    def memory_stats(self, device=None) -> dict:
        self.calls.append("memory_stats")
        if not self.available:
            return {}
        return {"allocated_bytes.all.current": self.allocated, "allocated_bytes.all.peak": self.peak,
                "reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.peak_reserved}

    def empty_cache(self) -> None:
        self.calls.append("empty_cache")
        if self.available:
            self.reserved = self._round_up(self.allocated)

    @contextlib.contextmanager
    def installed(self):
        """Inside the block, `torch.cuda.<name>` (and `torch.cuda.memory.<name>`) are this device's, under every
        name the function has (`from torch.cuda import max_memory_allocated` too: helpers/patching.py)."""
        own = {name: getattr(self, name) for name in _PATCHED if name != "reset_max_memory_allocated"}
        own["reset_max_memory_allocated"] = self.reset_peak_memory_stats   # the old name of the same reset
        with contextlib.ExitStack() as stack:
            for name, function in own.items():
                stack.enter_context(replaced(getattr(torch.cuda, name), _calling(function)))
            if self.available:
                # A pretend GPU supports bfloat16, as every recent one does: CUDA autocast in bfloat16 then runs and
                # a test can name the dtype chosen, instead of torch failing on "not compiled with CUDA".
                stack.enter_context(replaced(torch.cuda.is_bf16_supported, returning(True)))
                stack.enter_context(switching_devices())
            if self.follows_tensors and self.available:
                stack.enter_context(_cuda_autocast_casts_on_cpu())
                stack.enter_context(_CountStorages(self))
            yield self


@contextlib.contextmanager
def switching_devices():
    """On a pretend machine with a GPU, `with torch.cuda.device(i):` and `torch.cuda.set_device(i)` work (its
    one GPU is always the current one), as they do on a real one; a CPU build would refuse them."""
    # The context manager's own methods: what they call to switch differs between builds (a C function on a CUDA
    # build, which cannot be replaced in place), they themselves are Python in both.
    with replaced(torch.cuda.device.__enter__, returning(None)), \
            replaced(torch.cuda.device.__exit__, returning(False)), replaced(torch.cuda.set_device, returning(None)):
        yield


def _calling(function):
    """A `by` for helpers.patching.replaced: the call goes to `function` instead."""
    return lambda original, *args, **kwargs: function(*args, **kwargs)


class _CountStorages(TorchDispatchMode):
    """Counts on `gpu` the storages that operations create while it is active, until each one is freed."""

    def __init__(self, gpu: PretendCUDA):
        super().__init__()
        self.gpu, self.active = gpu, True
        self.live: dict[int, int] = {}      # a storage's address -> the bytes counted for it

    def __exit__(self, *exc):
        self.active = False                 # storages freed later change no counter
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        old = {t.untyped_storage()._cdata for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for t in pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                storage = t.untyped_storage()
                key = storage._cdata
                if key not in old and key not in self.live:   # a view or an in-place result is not new memory
                    nbytes = -(-storage.nbytes() // ALLOCATION_ROUNDING) * ALLOCATION_ROUNDING
                    self.live[key] = nbytes
                    self.gpu.allocate(nbytes)
                    weakref.finalize(storage, self._freed, key)
        return out

    def _freed(self, key: int) -> None:
        nbytes = self.live.pop(key)
        if self.active:
            self.gpu.free(nbytes)


@contextlib.contextmanager
def _cuda_autocast_casts_on_cpu():
    """Entering CUDA autocast also enters CPU autocast with its dtype (data on a pretend GPU computes on the CPU)."""
    autocast = torch.amp.autocast_mode.autocast
    enter, exit_ = autocast.__enter__, autocast.__exit__

    def entering(region):
        entered = enter(region)
        if region.device == "cuda":
            region._pretend_cpu = torch.autocast("cpu", dtype=region.fast_dtype, enabled=region._enabled)
            region._pretend_cpu.__enter__()
        return entered

    def exiting(region, *exc):
        cpu = region.__dict__.pop("_pretend_cpu", None)
        if cpu is not None:
            cpu.__exit__(*exc)
        return exit_(region, *exc)

    with mock.patch.object(autocast, "__enter__", entering), mock.patch.object(autocast, "__exit__", exiting):
        yield


class Kernel:
    """A piece of work on a pretend device: calling it runs `gpu.run_kernel(keep, temporary)`."""

    def __init__(self, gpu: PretendCUDA, keep: int, temporary: int):
        self.gpu, self.keep, self.temporary = gpu, keep, temporary

    def __call__(self) -> None:
        self.gpu.run_kernel(keep=self.keep, temporary=self.temporary)


def nothing() -> None:
    """Work that does nothing."""


def _towards_cuda(value) -> bool:
    return ((isinstance(value, torch.device) and value.type == "cuda")
            or (isinstance(value, str) and value.startswith("cuda")))


def _towards_cpu(value) -> bool:
    return ((isinstance(value, torch.device) and value.type == "cpu")
            or (isinstance(value, str) and value == "cpu"))


def _names(device_test, args, kwargs) -> bool:
    """Does a `.to(...)` call with these arguments name a device that `device_test` accepts (a tensor's own too)?"""
    named = [a.device if isinstance(a, torch.Tensor) else a for a in (*args[1:], kwargs.get("device"))]
    return any(device_test(a) for a in named)


def _on_the_cpu_instead(args, kwargs) -> tuple:
    """A `.to(...)` call's arguments with each CUDA device named replaced by the CPU (where the numbers stay)."""
    return (tuple("cpu" if _towards_cuda(a) else a for a in args),
            {k: ("cpu" if _towards_cuda(v) else v) for k, v in kwargs.items()})


class LooksOnCUDA(torch.Tensor):
    """A CPU tensor whose `.device` says cuda:0: data on a pretend GPU (see `on_pretend_gpu`). `.cpu()` and
    `.to("cpu")` give a plain CPU tensor of the same numbers (an alias, not counted as a new storage on the GPU)."""

    _KEEP = (torch.Tensor.detach, torch.Tensor.new_empty, torch.Tensor.clone)   # copies of the data: still on it

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        owner = getattr(func, "__self__", None)
        if owner is torch.Tensor.device:
            return torch.device("cuda", 0)
        if owner is torch.Tensor.is_cuda:
            return True
        if func is torch.Tensor.get_device:
            return 0
        if func is torch.Tensor.__deepcopy__:
            return _deepcopy(*args)
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to and not _names(_towards_cpu, args, kwargs):    # stays: a dtype, or to CUDA
            args, kwargs = _on_the_cpu_instead(args, kwargs)
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs).as_subclass(cls)
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
            if func in (torch.Tensor.cpu, torch.Tensor.to):
                return out.as_subclass(torch.Tensor)
            if func is torch.Tensor.type_as:        # to the other tensor's device and dtype
                return out.as_subclass(torch.Tensor if _names(_towards_cpu, args, kwargs) else cls)
            if func is torch.Tensor.module_load:      # load_state_dict's copy into a parameter, when it swaps them
                assigned = kwargs.get("assign", args[2] if len(args) > 2 else False)
                return out.as_subclass(type(args[1] if assigned else args[0]))
        return out.as_subclass(cls) if func in cls._KEEP else out


def _deepcopy(tensor, memo):
    if id(tensor) not in memo:
        with torch._C.DisableTorchFunctionSubclass():
            data = tensor.detach().clone().as_subclass(LooksOnCUDA)
        copied = nn.Parameter(data, tensor.requires_grad) if getattr(tensor, "_is_param", False) \
            else data.requires_grad_(tensor.requires_grad)
        if tensor.grad is not None:
            copied.grad = tensor.grad.clone()
        memo[id(tensor)] = copied
    return memo[id(tensor)]


class _MovesToPretendGPU(TorchFunctionMode):
    """`.to("cuda")` and `.cuda()` of data on the CPU give a copy of it on the pretend GPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__self__", None) is torch.Tensor.data and func.__name__ == "__set__":
            return _set_data(func, *args)
        towards_gpu = func is torch.Tensor.cuda or (func is torch.Tensor.to and _names(_towards_cuda, args, kwargs))
        if not towards_gpu or isinstance(args[0], LooksOnCUDA):
            return func(*args, **kwargs)
        if func is torch.Tensor.cuda:
            moved = args[0].clone()
        else:
            cpu_args, cpu_kwargs = _on_the_cpu_instead(args, kwargs)
            moved = func(*cpu_args, **cpu_kwargs)
            moved = moved.clone() if moved is args[0] else moved       # another device: always a copy
        return moved.as_subclass(LooksOnCUDA)


def _set_data(set_data, tensor, value):
    """`tensor.data = value` moves `tensor` where `value` is (PyTorch allows it between a CPU and a GPU): across
    the pretend GPU's edge, the tensor's class, which says where it is, follows."""
    set_data(tensor, value)
    if isinstance(value, LooksOnCUDA) and not isinstance(tensor, LooksOnCUDA):
        is_param = isinstance(tensor, nn.Parameter)
        tensor.__class__ = LooksOnCUDA
        if is_param:
            tensor._is_param = True
    elif isinstance(tensor, LooksOnCUDA) and not isinstance(value, LooksOnCUDA):
        tensor.__class__ = nn.Parameter if tensor.__dict__.pop("_is_param", False) else torch.Tensor


@contextlib.contextmanager
def moving_to_pretend_gpu():
    """Inside the block, data on the CPU moved to CUDA (`.to("cuda")`, `.cuda()`, a module's too) lands on the pretend
    GPU, `t.data = moved` moves `t` as it does on a GPU, and a module moved either way has each parameter object
    replaced by the moved one, so that its `.device` says where it now is. (By default `Module.to` keeps each
    parameter object and sets its `.data`; a pretend tensor's device is its class, which that would keep.
    Swapping them is PyTorch's option for subclasses, `torch.__future__.set_swap_module_params_on_conversion`,
    set here for the block.)"""
    swapping = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        with _MovesToPretendGPU():
            yield
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swapping)


def on_pretend_gpu(obj):
    """A tensor as a `LooksOnCUDA`; a module with its parameters and buffers made so, in place (returned)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().as_subclass(LooksOnCUDA).requires_grad_(obj.requires_grad)
    for module in obj.modules():
        for name, p in module._parameters.items():
            if p is not None:
                module._parameters[name] = nn.Parameter(p.detach().as_subclass(LooksOnCUDA), p.requires_grad)
        for name, b in module._buffers.items():
            if b is not None:
                module._buffers[name] = b.as_subclass(LooksOnCUDA)
    return obj
