"""The grader's side of grading outside the kernel: stand-ins for the student's names.

A test cell runs in the grader's own process (`course.grading.verdicts.judge`), which never runs
student code. The names the test takes from the notebook (the exercise's function or
class, a variable of the notebook) are bound to stand-ins (`RemoteObject`) that send each
use to the kernel, where `course.grading.kernel.answer_server` serves it, and turn what comes back into
values of the grader's own:

- requests go in as pickles of the grader's own objects (its models, tensors, probes,
  optimizers: only what the call needs), with the kernel's own objects named by number;
- answers come back as data only: `course.grading.verdicts.wire.decode` reads them (JSON and raw tensor
  bytes, nothing unpickled) with exact type checks, then `_Decoder` builds plain values
  from their tags. A value that is not data (a model of the student's class, a
  tensor that still has its autograd graph) stays in the kernel and comes back as a new
  stand-in;
- after each call the state of every argument (listed by `_nodes`) comes back too and is
  written into the grader's originals (`_apply`): parameters, buffers, gradients and
  modes of a model, an optimizer's state, a probe's records. Values that are not data are
  never written into the grader's objects;
- torch's global state (gradient mode, random generator, default dtype) travels with
  every request and every answer, so that `torch.is_grad_enabled()` or the next
  `torch.rand` in a test sees what the call left behind, as it would in the kernel.
"""

from __future__ import annotations

import builtins
import copyreg
import dataclasses
import functools
import io
import math
import pickle
import socket
import struct
import types
from collections import OrderedDict, defaultdict
from time import monotonic

import torch

from course.grading.verdicts.mirror import Files
from course.grading.verdicts.wire import WireError, decode, hash_safe

_HEADER = struct.Struct("!Q")
MAX_ANSWER = 64 << 20           # bytes one answer may take
MAX_NODES = 20000               # arguments' parts whose state is brought back after a call
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_MISSING = object()
# Exceptions that are not builtins but that tests name (torch.load's refusal).
_EXCEPTIONS = {"UnpicklingError": pickle.UnpicklingError}


class KernelGone(ConnectionError):
    """The kernel stopped serving in the middle of a test (it died, or closed the connection)."""


class AnswerTimeout(TimeoutError):
    """The kernel did not answer within the test's time."""


class Channel:
    """The kernel as one notebook's tests see it: the connection of the test that runs now, and the
    stand-ins for the kernel's objects, by number, which outlive a test as the objects do."""

    def __init__(self):
        self.connection: Connection | None = None
        self.objects: dict[int, RemoteObject] = {}


class Connection:
    """One test's conversation with the kernel's `_course_serve`."""

    def __init__(self, sock: socket.socket, deadline: float, channel: Channel | None = None,
                 files: "Files | None" = None):
        self.sock, self.deadline = sock, deadline
        self.files = files
        self.channel = channel or Channel()
        self.channel.connection = self
        self.requests = 0
        self.kernel_rng: torch.Tensor | None = None     # the kernel's random state as it last said
        self.kept: list[list] = []      # see answer_server._Server.kept: the same lists, in the same order

    # -- framing ---------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        self.sock.settimeout(max(0.1, self.deadline - monotonic()))
        try:
            self.sock.sendall(_HEADER.pack(len(data)) + data)
        except OSError as error:
            raise KernelGone(f"the kernel stopped answering ({type(error).__name__})") from None

    def receive(self) -> bytes:
        size = _HEADER.unpack(self._exactly(_HEADER.size))[0]
        if size > MAX_ANSWER:
            raise WireError(f"an answer of {size} bytes is more than the {MAX_ANSWER} allowed")
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        chunks = []
        while n:
            left = self.deadline - monotonic()
            if left <= 0:
                raise AnswerTimeout("the student's code did not finish in the time a test cell has")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(min(n, 1 << 20))
            except socket.timeout:
                raise AnswerTimeout("the student's code did not finish in the time a test cell has") from None
            except OSError as error:
                raise KernelGone(f"the kernel stopped answering ({type(error).__name__})") from None
            if not chunk:
                raise KernelGone("the kernel died or stopped serving during this test")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    # -- the start and the end of a test -----------------------------------------------------------

    def start(self) -> None:
        """Take over the kernel's global state: the test starts where the notebook left torch."""
        hello = decode(self.receive())
        if type(hello) is not list or len(hello) != 2 or hello[0] != "hello":
            raise WireError("the kernel did not greet as the answer server does")
        self.adopt(hello[1])

    def finish(self) -> None:
        self.send(b"end")
        self.send(pickle.dumps(global_state()))

    # -- torch's global state, both ways: the random state only when it changed (it is 5 kB) -----------

    def outgoing_state(self) -> list:
        state = global_state()
        if self.kernel_rng is not None and torch.equal(state[1], self.kernel_rng):
            state[1] = None
        else:
            self.kernel_rng = state[1]      # the kernel takes it over
        return state

    def adopt(self, state) -> None:
        set_global_state(state)
        if type(state) is list and len(state) == 5 and type(state[1]) is torch.Tensor:
            self.kernel_rng = state[1]

    # -- requests ------------------------------------------------------------------------------------

    def request(self, op: str, **fields):
        """Do `op` in the kernel; the decoded result, or the kernel's exception raised here."""
        # The keyword arguments' values, not their dict: the kernel unpacks that one with ** and cannot keep it.
        nodes = _nodes([fields.get("target"), fields.get("args"), tuple((fields.get("kwargs") or {}).values()),
                        fields.get("value")])
        grads = [(i, n.grad) for i, n in enumerate(nodes) if isinstance(n, torch.Tensor) and n.grad is not None]
        message = dict(fields, op=op, nodes=nodes, grads=grads, **{"global": self.outgoing_state()})
        if self.files is not None:
            message["files"] = self.files.outgoing()
        buffer = io.BytesIO()
        try:
            _Pickler(buffer).dump(message)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            raise TypeError(f"the grader cannot send this argument to the notebook: {error}") from None
        self.requests += 1
        self.send(buffer.getvalue())
        reply = decode(self.receive())
        if type(reply) is not list or len(reply) < 6 or reply[0] not in ("ok", "raise"):
            raise WireError("an answer of the wrong form")
        states, kept_states, kernel_state, files = reply[-4:]
        if self.files is not None:
            self.files.incoming(files)
        for kept, kept_state in zip(self.kept, kept_states if type(kept_states) is list else []):
            _apply_all(self, kept, kept_state)
        _apply_all(self, nodes, states)
        decoder = _Decoder(self, nodes)
        self.adopt(kernel_state)
        if reply[0] == "raise":
            raise _exception(reply[1], reply[2])
        value = decoder.value(reply[1])
        if decoder.escaped:
            keep(self.kept, nodes)
        return value


MAX_KEPT = 64      # argument lists kept in sync at once; the oldest goes first


def keep(kept: list, nodes: list) -> None:
    """Keep `nodes` in sync after later requests, as answer_server's `keep` does on its side, in step:
    only where an object of the kernel's may hold on to a part that can change (a module, a list,
    a probe; a tensor alone, such as a model's input, is not worth the cost)."""
    if any(not isinstance(node, torch.Tensor) for node in nodes):
        kept.append(nodes)
        del kept[:-MAX_KEPT]


class _Pickler(pickle.Pickler):
    """The grader's objects by value; the kernel's own (stand-ins) by their number."""

    def reducer_override(self, obj):
        # An optimizer pickles only its state and parameter groups; its hooks (a test's step counter) go too.
        if isinstance(obj, torch.optim.Optimizer):
            # Not the step function a scheduler wraps around it: the kernel's copy wraps its own.
            state = {k: v for k, v in obj.__dict__.items() if not isinstance(v, (types.FunctionType, types.MethodType))}
            return copyreg._reconstructor, (type(obj), object, None), state
        return NotImplemented

    def persistent_id(self, obj):
        if type(obj) is RemoteObject:
            return object.__getattribute__(obj, "_number")
        if type(obj) is KernelObject:
            return obj.number
        return None


def _exception(names, message) -> Exception:
    """The kernel's exception as one of the grader's own classes: its first builtin (or known) base.
    One that would stop a program (SystemExit, KeyboardInterrupt) fails the test as a RuntimeError."""
    if type(names) is not list or type(message) is not str or not names:
        return WireError("an exception of the wrong form")
    for name in names:
        kind = (_EXCEPTIONS.get(name) or getattr(builtins, name, None)) if type(name) is str else None
        if isinstance(kind, type) and issubclass(kind, Exception):
            try:
                return kind(message)
            except TypeError:       # an exception class whose constructor wants more
                continue
    return RuntimeError(f"{str(names[0])[:100]}: {message}")


# -- torch's global state -------------------------------------------------------------------------------

AUTOCAST_DEVICES = ("cpu", "cuda")     # autocast's state (on or off, and its dtype) travels for these
_DTYPES = ("float32", "float64", "float16", "bfloat16")


def global_state() -> list:
    """[grad mode, random state, default dtype, [[device, autocast on, autocast dtype], ...], default device]."""
    autocast = [[d, bool(torch.is_autocast_enabled(d)), str(torch.get_autocast_dtype(d)).removeprefix("torch.")]
                for d in AUTOCAST_DEVICES]
    return [bool(torch.is_grad_enabled()), torch.get_rng_state(), str(torch.get_default_dtype()).removeprefix("torch."),
            autocast, str(torch.get_default_device())]


def set_global_state(state) -> None:
    """Take over torch's global state as the kernel reports it, each part only where it is of the right form."""
    if type(state) is not list or len(state) != 5:
        raise WireError("torch's global state in the wrong form")
    grad, rng, dtype, autocast, device = state
    if type(grad) is bool:
        torch.set_grad_enabled(grad)
    if type(rng) is torch.Tensor and rng.dtype == torch.uint8 and rng.dim() == 1:     # None: unchanged
        try:
            torch.set_rng_state(rng)
        except RuntimeError:
            pass
    if type(dtype) is str and dtype in _DTYPES:
        torch.set_default_dtype(getattr(torch, dtype))
    for entry in autocast if type(autocast) is list else []:
        if type(entry) is list and len(entry) == 3 and entry[0] in AUTOCAST_DEVICES and type(entry[1]) is bool \
                and type(entry[2]) is str and entry[2] in _DTYPES:
            torch.set_autocast_enabled(entry[0], entry[1])
            try:
                torch.set_autocast_dtype(entry[0], getattr(torch, entry[2]))
            except RuntimeError:        # a dtype autocast refuses on that device
                pass
    if type(device) is str and len(device) < 40:
        try:
            place = torch.device(device)
        except (RuntimeError, ValueError):
            return
        if place.type == "cpu" or _available(place):
            torch.set_default_device(None if place.type == "cpu" else place)


# -- the arguments whose state comes back ---------------------------------------------------------------

_STATELESS = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.BuiltinMethodType,
              torch.device, torch.dtype, torch.Size)


def _nodes(values) -> list:
    """Every part of `values` that a call can change, each once, in a fixed order."""
    nodes, seen, stack = [], set(), list(reversed(values))
    while stack and len(nodes) < MAX_NODES:
        value = stack.pop()
        kind = type(value)
        if kind in _SCALARS or kind in (RemoteObject, KernelObject) or isinstance(value, _STATELESS) or id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            nodes.append(value)
        elif kind is tuple or isinstance(value, tuple):
            stack.extend(reversed(value))
        elif kind is list:
            nodes.append(value)
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            nodes.append(value)
            for key, item in reversed(list(value.items())):
                stack.extend((item, key))
        elif isinstance(value, torch.Generator):
            nodes.append(value)
        elif isinstance(value, types.MethodType):
            stack.append(value.__self__)
        elif isinstance(value, functools.partial):
            stack.extend([value.func, value.args, value.keywords])
        elif type(getattr(value, "__dict__", None)) is dict:
            nodes.append(value)
            stack.extend(reversed(list(value.__dict__.values())))
    return nodes


# -- answers into the grader's values ------------------------------------------------------------------

class KernelObject:
    """In an argument's state, an object that only the kernel has (a hook a student's function left on
    the test's model): it does nothing here, and using it fails. A live stand-in there would let the
    student's code run on, and see, what the test computes with that argument afterwards. Sent back to
    the kernel with its argument, it is the kernel's object again."""

    def __init__(self, number: int, type_name: str):
        self.number, self.type_name = number, type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} left by the notebook's code>"


class _Decoder:
    """Builds the grader's values from an answer's tags (see `course.grading.kernel.answer_server`); `inert`: objects
    that stay in the kernel come as `KernelObject`s rather than as live stand-ins."""

    def __init__(self, connection: Connection, nodes: list, inert: bool = False):
        self.connection, self.nodes, self.inert = connection, nodes, inert
        self.escaped = False        # did a value name an object that stays in the kernel?

    def value(self, item, depth: int = 0):
        if depth > 64:
            raise WireError("nested too deeply")
        kind = type(item)
        if kind in _SCALARS:
            return item
        if kind is not tuple or not item or type(item[0]) is not str:
            raise WireError(f"an untagged {kind.__name__}")
        tag, rest = item[0], item[1:]
        if tag == "R" and len(rest) == 1 and type(rest[0]) is int and 0 <= rest[0] < len(self.nodes):
            return self.nodes[rest[0]]
        if tag == "H" and len(rest) == 4 and type(rest[0]) is int and type(rest[1]) is str and type(rest[3]) is list:
            self.escaped = True
            if self.inert:
                return KernelObject(rest[0], rest[1][:100])
            classes = tuple(c for c in rest[3][:100] if type(c) is str)
            channel = self.connection.channel
            return channel.objects.setdefault(rest[0], RemoteObject(channel, rest[0], rest[1][:100], classes))
        if tag == "T":
            return self.tensor(rest, depth)
        if tag == "TG" and len(rest) == 2 and type(rest[0]) is tuple and rest[0][:1] == ("T",) \
                and type(rest[1]) is tuple and len(rest[1]) == 5 and rest[1][0] == "H" and type(rest[1][1]) is int:
            self.escaped = True     # the arguments that made it stay in sync: a backward() reaches them
            return _graph_values(self.tensor(rest[0][1:], depth), self.connection.channel, rest[1][1])
        if tag == "D" and len(rest) == 1 and type(rest[0]) is str:
            return _device(rest[0])
        if tag == "DT" and len(rest) == 1 and type(rest[0]) is str:
            dtype = getattr(torch, rest[0], None)
            if isinstance(dtype, torch.dtype):
                return dtype
        if tag == "S" and len(rest) == 1 and type(rest[0]) is list and all(type(n) is int for n in rest[0]):
            return torch.Size(rest[0])
        if tag in ("tuple", "L", "set", "fset") and len(rest) == 1 and type(rest[0]) is list:
            items = [self.value(v, depth + 1) for v in rest[0]]
            if tag in ("set", "fset"):
                items = [hash_safe(item) for item in items]
            try:
                return {"tuple": tuple, "L": list, "set": set, "fset": frozenset}[tag](items)
            except TypeError:
                raise WireError("an unhashable set item") from None
        if tag == "M" and len(rest) == 2 and type(rest[0]) is list and type(rest[1]) is str:
            made = {"OrderedDict": OrderedDict, "defaultdict": dict}.get(rest[1], dict)()
            for pair in rest[0]:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("a dict item of the wrong form")
                key = hash_safe(self.value(pair[0], depth + 1))
                try:
                    made[key] = self.value(pair[1], depth + 1)
                except TypeError:
                    raise WireError("an unhashable dict key") from None
            return made
        if tag == "G" and len(rest) == 2 and all(type(v) is str for v in rest):
            return _library_object(*rest)
        if tag == "DC" and len(rest) == 3 and all(type(v) is str for v in rest[:2]) and type(rest[2]) is list:
            kind = _library_object(rest[0], rest[1])
            if not dataclasses.is_dataclass(kind) or not kind.__module__.startswith("helpers."):
                raise WireError("a record that is not one of the course's")
            fields = {}
            for pair in rest[2]:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                    raise WireError("a record field of the wrong form")
                fields[pair[0]] = self.value(pair[1], depth + 1)
            try:
                return kind(**fields)
            except TypeError:
                raise WireError("a record with the wrong fields") from None
        if tag == "NPS" and len(rest) == 2 and type(rest[0]) is str and type(rest[1]) in (bool, int, float, complex):
            return _numpy_dtype(rest[0]).type(rest[1])
        if tag == "NPA" and len(rest) == 1 and type(rest[0]) is torch.Tensor:
            _numpy_dtype(str(rest[0].dtype).removeprefix("torch."))
            return rest[0].numpy()
        if tag == "MOD" and len(rest) == 1 and type(rest[0]) is str:
            return _library_module(rest[0])
        raise WireError(f"an answer tagged {tag[:20]!r} of the wrong form")

    def tensor(self, rest, depth):
        if len(rest) != 6:
            raise WireError("a tensor of the wrong form")
        data, shape, device, requires_grad, grad, is_parameter = rest
        if type(data) is not torch.Tensor or type(shape) is not tuple or not all(type(n) is int and n >= 0 for n in shape) \
                or type(device) is not str or type(requires_grad) is not bool or type(is_parameter) is not bool:
            raise WireError("a tensor of the wrong form")
        place = _device(device)
        if place.type == "meta":
            tensor = torch.empty(shape, dtype=data.dtype, device="meta")
        else:
            if data.numel() != math.prod(shape):
                raise WireError("a tensor whose values do not fill its shape")
            tensor = data.reshape(shape)
            if place.type != "cpu" and _available(place):
                tensor = tensor.to(place)
        differentiable = tensor.is_floating_point() or tensor.is_complex()
        if is_parameter:
            tensor = torch.nn.Parameter(tensor, requires_grad=requires_grad and differentiable)
        elif requires_grad and differentiable:
            tensor.requires_grad_(True)
        if grad is not None:
            gradient = self.value(grad, depth + 1)
            if type(gradient) is torch.Tensor and gradient.shape == tensor.shape:
                try:
                    tensor.grad = gradient.to(tensor.device, tensor.dtype)
                except RuntimeError:
                    pass
        return tensor


def _graph_values(values: torch.Tensor, channel: Channel, number: int) -> torch.Tensor:
    """A tensor that still has its autograd graph in the kernel, as the grader computes with it: its values,
    here, as a tensor whose backward pass goes on in the kernel. The gradient that reaches these values is
    handed to the kernel's tensor's own `backward` (a method of the student's object), so that a loss the test
    computes here still fills the gradients of the student's model there; every other use is the grader's."""
    if not (values.is_floating_point() or values.is_complex()):
        return values
    leaf = values.detach().requires_grad_(True)

    def backward_in_kernel(grad):
        channel.connection.request("method", target=KernelObject(number, "Tensor"), name="backward", args=(grad,),
                                   kwargs={})

    leaf.register_hook(backward_in_kernel)
    return leaf.view_as(leaf)     # not a leaf, as the kernel's tensor is not: it has a grad_fn


_NUMPY_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                 "float32", "float64", "complex64", "complex128")


def _numpy_dtype(name: str):
    """numpy's own dtype of that name, for numbers and numeric arrays the notebook's code returned."""
    if name not in _NUMPY_DTYPES:
        raise WireError(f"a numpy value of dtype {name[:20]!r}")
    import numpy

    return numpy.dtype(name)


def _device(text: str) -> torch.device:
    try:
        return torch.device(text[:40])
    except (RuntimeError, ValueError):
        raise WireError("a device of the wrong form") from None


def _available(device: torch.device) -> bool:
    module = getattr(torch, device.type, None)
    return bool(module is not None and getattr(module, "is_available", lambda: False)())


_LIBRARIES = ("torch", "numpy", "math", "collections", "functools", "itertools", "operator", "helpers",
              "builtins", "typing", "random", "copy", "os", "pathlib", "tempfile", "matplotlib")


_CLASS_LIBRARIES = ("torch", "numpy", "helpers", "collections", "builtins", "typing")


def _library_module(name: str):
    """The judge's own copy of a library module the notebook refers to (never a student's module). Only one
    the judge has imported already: importing on the kernel's word would run a module's code chosen by the
    kernel (one that exits when imported)."""
    import sys

    module = sys.modules.get(name) if type(name) is str and name.split(".")[0] in _LIBRARIES else None
    if module is None:
        raise WireError(f"a module the judge has not imported: {str(name)[:80]}")
    return module


def _library_object(module: str, qualname: str) -> type:
    """The grader's own class of a library (a function would run here: those stay in the kernel)."""
    if module.split(".")[0] not in _CLASS_LIBRARIES:
        raise WireError(f"a class the grader does not take from its own libraries: {module[:80]}")
    found = _library_module(module)
    for part in qualname.split("."):
        found = getattr(found, part, _MISSING)
        if found is _MISSING:
            raise WireError(f"no {module}.{qualname[:80]} in the grader's libraries")
    if not isinstance(found, type):
        raise WireError(f"{module}.{qualname[:80]} is not a class")
    return found


# -- changed arguments into the grader's originals ------------------------------------------------------

def _apply_all(connection: Connection, nodes: list, states) -> None:
    if type(states) is list and len(states) == len(nodes):
        inert = _Decoder(connection, nodes, inert=True)
        for node, state in zip(nodes, states):
            _apply(node, state, inert)


def _apply(node, state, decoder: _Decoder) -> None:
    """Bring the grader's `node` to the `state` its copy in the kernel has after the call."""
    if type(state) is not tuple or not state or type(state[0]) is not str or state[0] == "X":
        return
    tag = state[0]
    try:
        if tag == "T" and isinstance(node, torch.Tensor):
            _apply_tensor(node, decoder.tensor(state[1:], 0))
        elif tag == "L" and type(node) is list and len(state) == 2:
            new = decoder.value(("L", state[1]))
            new = [_keep_own(old, item) for old, item in zip(node, new)] + new[len(node):]
            if not _same(node, new):
                node[:] = new
        elif tag == "M" and isinstance(node, dict) and len(state) == 3:
            new = decoder.value(("M", state[1], "dict"))
            new = {key: _keep_own(node.get(key, _MISSING), item) for key, item in new.items()}
            if not _same(dict(node), new):
                node.clear()
                node.update(new)
        elif tag == "GEN" and isinstance(node, torch.Generator) and len(state) == 2:
            if type(state[1]) is torch.Tensor and state[1].dtype == torch.uint8:
                node.set_state(state[1])
        elif tag == "A" and len(state) == 2 and type(state[1]) is list:
            attributes = node.__dict__
            for pair in state[1]:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                    continue
                current = attributes.get(pair[0], _MISSING)
                new = _keep_own(current, decoder.value(pair[1]))
                if not _same(current, new):
                    attributes[pair[0]] = new
    except (WireError, RuntimeError, TypeError, ValueError):
        pass        # a state that does not fit: the grader's argument stays as it was


def _keep_own(current, new):
    """The grader's own function, class or module where the kernel only names an object of its own:
    the kernel copy held the same one (a DataLoader's collate_fn), which it cannot send as data."""
    if type(new) is KernelObject and isinstance(current, _STATELESS + (types.MethodType, functools.partial)):
        return current
    return new


def _apply_tensor(node: torch.Tensor, new: torch.Tensor) -> None:
    with torch.no_grad():
        if not _same_tensor(node, new):
            if node.dtype == new.dtype and node.shape == new.shape and node.device == new.device:
                node.copy_(new)
            else:
                try:
                    node.data = new.detach()
                except RuntimeError:        # to or from the meta device: swap the whole tensor in place
                    replacement = new.detach()
                    if isinstance(node, torch.nn.Parameter):
                        replacement = torch.nn.Parameter(replacement, requires_grad=node.requires_grad)
                    torch.utils.swap_tensors(node, replacement)
    if node.is_leaf and node.requires_grad != new.requires_grad:
        node.requires_grad_(new.requires_grad)
    if new.grad is None:
        node.grad = None
    elif node.grad is None or not _same_tensor(node.grad, new.grad):
        try:
            node.grad = new.grad
        except RuntimeError:
            node.grad = None


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape or a.device != b.device:
        return False
    if a.device.type == "meta":
        return True
    return bool(torch.equal(a.detach(), b.detach())) or bool(
        (a.is_floating_point() or a.is_complex()) and torch.equal(a.isnan(), b.isnan())
        and torch.equal(a.detach().nan_to_num(), b.detach().nan_to_num()))


def _same(a, b) -> bool:
    """Is the grader's `a` already what `b` (freshly decoded) says? Compares data, and objects by identity."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return _same_tensor(a, b) and a.requires_grad == b.requires_grad
    if type(a) in _SCALARS:
        return a == b or (type(a) is float and math.isnan(a) and math.isnan(b))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) in (set, frozenset):
        return all(type(x) in _SCALARS for x in a | b) and a == b
    if type(a) in (dict, OrderedDict, defaultdict):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a.items(), b.items()))
    if type(a) in (torch.device, torch.dtype, torch.Size):
        return a == b
    return False


# -- the stand-in -----------------------------------------------------------------------------------------

def _forward(name: str):
    def method(self, *args, **kwargs):
        return _request(self, "method", name=name, args=args, kwargs=kwargs)
    method.__name__ = name
    return method


def _request(stand_in, op: str, **fields):
    return object.__getattribute__(stand_in, "_channel").connection.request(op, target=stand_in, **fields)


class RemoteObject:
    """An object that lives in the student's kernel: every use is a request served there."""

    __slots__ = ("_channel", "_number", "_type_name", "_classes", "__weakref__")

    def __init__(self, channel: Channel, number: int, type_name: str, classes: tuple[str, ...] = ()):
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_type_name", type_name)
        object.__setattr__(self, "_classes", classes)   # module.qualname of its class and bases, as the kernel said

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)      # pickle, copy and friends probe these: never the kernel's
        return _request(self, "getattr", name=name)

    def __setattr__(self, name: str, value) -> None:
        _request(self, "setattr", name=name, value=value)

    def __call__(self, *args, **kwargs):
        return _request(self, "call", args=args, kwargs=kwargs)

    # Equal only to itself, hashed by identity: one stand-in per kernel object (Channel.objects), whatever its number.
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        # Said here, never asked of the kernel: a failing check's message must not be the student's to write.
        return f"<{object.__getattribute__(self, '_type_name')} in the notebook>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __bool__(self) -> bool:
        value = _request(self, "method", name="__bool__", args=(), kwargs={})
        return value if type(value) is bool else bool(_request(self, "method", name="__len__", args=(), kwargs={}))

    def __iter__(self):
        return _iterate(self)

    def __course_local__(self):
        """A plain value of this object for a check: a tensor without its graph, else the object itself."""
        if object.__getattribute__(self, "_type_name") in ("Tensor", "Parameter"):
            return _request(self, "method", name="detach", args=(), kwargs={})
        return self

    def __course_is__(self, expected) -> bool:
        """Whether the kernel says this object's class is `expected` (a class or a tuple) or derives from it."""
        kinds = expected if isinstance(expected, tuple) else (expected,)
        classes = object.__getattribute__(self, "_classes")
        return any(f"{k.__module__}.{k.__qualname__}" in classes for k in kinds if isinstance(k, type))


def _iterate(stand_in):
    iterator = _request(stand_in, "method", name="__iter__", args=(), kwargs={})
    if type(iterator) is not RemoteObject:
        yield from iterator
        return
    while True:
        try:
            yield _request(iterator, "method", name="__next__", args=(), kwargs={})
        except StopIteration:
            return


for _name in ("__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__next__", "__int__",
              "__float__", "__index__", "__add__",
              "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__",
              "__mod__", "__matmul__", "__rmatmul__", "__pow__", "__neg__", "__abs__", "__enter__", "__exit__",
              "__round__", "__fspath__"):
    setattr(RemoteObject, _name, _forward(_name))
del _name
