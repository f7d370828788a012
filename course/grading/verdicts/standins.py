"""An answer's tags into the grader's own values (see `course.grading.kernel.answer_server`): data as data,
the kernel's objects as stand-ins, a library's classes and functions as the grader's own imports."""


from __future__ import annotations

import dataclasses
import inspect
import math
from collections import OrderedDict
from typing import TYPE_CHECKING

import torch

from course.grading.kernel.protocol import (
    CLASS_LIBRARIES,
    LIBRARIES,
    SCALARS,
    TAG_DEVICE,
    TAG_DTYPE,
    TAG_FROZENSET,
    TAG_GRAPH,
    TAG_HANDLE,
    TAG_LIBRARY,
    TAG_LIST,
    TAG_MAPPING,
    TAG_MODULE,
    TAG_NUMPY_ARRAY,
    TAG_NUMPY_SCALAR,
    TAG_RECORD,
    TAG_REF,
    TAG_SET,
    TAG_SIZE,
    TAG_TENSOR,
    TAG_TUPLE,
)
from course.grading.verdicts.remote import RemoteObject
from course.grading.verdicts.state import available
from course.grading.verdicts.wire_decode import WireError, hash_safe

if TYPE_CHECKING:
    from course.grading.verdicts.connection import Channel, Connection

_MISSING = object()
# Exceptions that are not builtins but that tests name (torch.load's refusal).
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


class Decoder:
    """Builds the grader's values from an answer's tags (see `course.grading.kernel.answer_server`); `inert`: objects
    that stay in the kernel come as `KernelObject`s rather than as live stand-ins."""

    def __init__(self, connection: Connection, nodes: list, inert: bool = False):
        self.connection, self.nodes, self.inert = connection, nodes, inert
        self.escaped = False        # did a value name an object that stays in the kernel?

    def value(self, item, depth: int = 0):
        if depth > 64:
            raise WireError("nested too deeply")
        kind = type(item)
        if kind in SCALARS:
            return item
        if kind is not tuple or not item or type(item[0]) is not str:
            raise WireError(f"an untagged {kind.__name__}")
        tag, rest = item[0], item[1:]
        if tag == TAG_REF and len(rest) == 1 and type(rest[0]) is int and 0 <= rest[0] < len(self.nodes):
            return self.nodes[rest[0]]
        if tag == TAG_HANDLE and len(rest) == 4 and type(rest[0]) is int and type(rest[1]) is str and type(rest[3]) is list:
            self.escaped = True
            if self.inert:
                return KernelObject(rest[0], rest[1][:100])
            classes = tuple(c for c in rest[3][:100] if type(c) is str)
            channel = self.connection.channel
            return channel.objects.setdefault(rest[0], RemoteObject(channel, rest[0], rest[1][:100], classes))
        if tag == TAG_TENSOR:
            return self.tensor(rest, depth)
        if tag == TAG_GRAPH and len(rest) == 2 and type(rest[0]) is tuple and rest[0][:1] == (TAG_TENSOR,) \
                and type(rest[1]) is tuple and len(rest[1]) == 5 and rest[1][0] == TAG_HANDLE and type(rest[1][1]) is int:
            if self.inert:          # left on a test's object: its values only, or the test's backward() would run there
                return self.tensor(rest[0][1:], depth)
            self.escaped = True     # the arguments that made it stay in sync: a backward() reaches them
            return graph_values(self.tensor(rest[0][1:], depth), self.connection.channel, rest[1][1])
        if tag == TAG_DEVICE and len(rest) == 1 and type(rest[0]) is str:
            return _device(rest[0])
        if tag == TAG_DTYPE and len(rest) == 1 and type(rest[0]) is str:
            dtype = getattr(torch, rest[0], None)
            if isinstance(dtype, torch.dtype):
                return dtype
        if tag == TAG_SIZE and len(rest) == 1 and type(rest[0]) is list and all(type(n) is int for n in rest[0]):
            return torch.Size(rest[0])
        if tag in (TAG_TUPLE, TAG_LIST, TAG_SET, TAG_FROZENSET) and len(rest) == 1 and type(rest[0]) is list:
            items = [self.value(v, depth + 1) for v in rest[0]]
            if tag in (TAG_SET, TAG_FROZENSET):
                items = [hash_safe(item) for item in items]
            try:
                return {TAG_TUPLE: tuple, TAG_LIST: list, TAG_SET: set, TAG_FROZENSET: frozenset}[tag](items)
            except TypeError:
                raise WireError("an unhashable set item") from None
        if tag == TAG_MAPPING and len(rest) == 2 and type(rest[0]) is list and type(rest[1]) is str:
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
        if tag == TAG_LIBRARY and len(rest) == 2 and all(type(v) is str for v in rest):
            return _library_object(*rest)
        if tag == TAG_RECORD and len(rest) == 3 and all(type(v) is str for v in rest[:2]) and type(rest[2]) is list:
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
        if tag == TAG_NUMPY_SCALAR and len(rest) == 2 and type(rest[0]) is str and type(rest[1]) in (bool, int, float, complex):
            try:
                return _numpy_dtype(rest[0]).type(rest[1])
            except (OverflowError, TypeError, ValueError):     # 2**70 as an int64
                raise WireError("a numpy number out of its dtype's range") from None
        if tag == TAG_NUMPY_ARRAY and len(rest) == 1 and type(rest[0]) is torch.Tensor:
            _numpy_dtype(str(rest[0].dtype).removeprefix("torch."))
            return rest[0].numpy()
        if tag == TAG_MODULE and len(rest) == 1 and type(rest[0]) is str:
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
            if place.type != "cpu" and available(place):
                tensor = tensor.to(place)
        differentiable = tensor.is_floating_point() or tensor.is_complex()
        if is_parameter:
            tensor = torch.nn.Parameter(tensor, requires_grad=requires_grad and differentiable)
        elif requires_grad and differentiable:
            tensor.requires_grad_(True)
        if grad is not None:
            gradient = self.value(grad, depth + 1)
            # Made here by this decoder (never the kernel's object): a tensor of the judge's own.
            if isinstance(gradient, torch.Tensor) and gradient.shape == tensor.shape:
                try:
                    tensor.grad = gradient.to(tensor.device, tensor.dtype)
                except RuntimeError:
                    pass
        return tensor


def graph_values(values: torch.Tensor, channel: Channel, number: int) -> torch.Tensor:
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


def _library_module(name: str):
    """The judge's own copy of a library module the notebook refers to (never a student's module). Only one
    the judge has imported already: importing on the kernel's word would run a module's code chosen by the
    kernel (one that exits when imported)."""
    import sys

    module = sys.modules.get(name) if type(name) is str and name.split(".")[0] in LIBRARIES else None
    if module is None:
        raise WireError(f"a module the judge has not imported: {str(name)[:80]}")
    return module


def _library_object(module: str, qualname: str) -> type:
    """The grader's own class of a library (a function would run here: those stay in the kernel)."""
    if module.split(".")[0] not in CLASS_LIBRARIES:
        raise WireError(f"a class the grader does not take from its own libraries: {module[:80]}")
    found = _library_module(module)
    for part in qualname.split("."):
        # static: a module's __getattr__ (numpy's) would import a submodule the kernel names
        found = inspect.getattr_static(found, part, _MISSING)
        if found is _MISSING:
            raise WireError(f"no {module}.{qualname[:80]} in the grader's libraries")
    if not isinstance(found, type):
        raise WireError(f"{module}.{qualname[:80]} is not a class")
    # Only a class by its own name: the walk above also goes through a module's imports (sympy's classes, which
    # eval a string, or subprocess.Popen, reached from a torch module), and a notebook can give its copy of such a
    # class an allowed-looking __module__ and __qualname__. The kernel names a class by exactly these two.
    if found.__module__ != module or found.__qualname__ != qualname:
        raise WireError(f"{module}.{qualname[:80]} is not a class of that library's own")
    # Nor one built on another library's class: torch defines sympy functions (torch.utils._sympy), which sympify,
    # and so eval, the strings they are called with (a test's call, or a hook a notebook sets on a test's model).
    foreign = [kind for kind in found.__mro__ if kind.__module__.split(".")[0] not in CLASS_LIBRARIES]
    if foreign:
        raise WireError(f"{module}.{qualname[:80]} is built on {foreign[0].__module__[:80]}.{foreign[0].__qualname__[:80]}")
    return found


def _device(text: str) -> torch.device:
    try:
        return torch.device(text[:40])
    except (RuntimeError, ValueError):
        raise WireError("a device of the wrong form") from None
