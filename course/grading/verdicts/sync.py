"""Changed arguments into the grader's originals: after a call, each argument is brought to the state its
copy in the kernel has (parameters, buffers, gradients, modes, an optimizer's state, a probe's records)."""


from __future__ import annotations

import dataclasses
import functools
import math
import types
from collections import OrderedDict, defaultdict
from typing import TYPE_CHECKING

import torch

from course.grading.kernel.protocol import (
    SCALARS,
    TAG_ATTRS,
    TAG_GENERATOR,
    TAG_LIST,
    TAG_MAPPING,
    TAG_OPAQUE,
    TAG_TENSOR,
)
from course.grading.verdicts.decode import Decoder, KernelObject
from course.grading.verdicts.remote import RemoteObject
from course.grading.verdicts.wire import WireError

if TYPE_CHECKING:
    from course.grading.verdicts.connection import Connection

_MISSING = object()
# Exceptions that are not builtins but that tests name (torch.load's refusal).
# -- changed arguments into the grader's originals ------------------------------------------------------

def apply_all(connection: Connection, nodes: list, states) -> None:
    if type(states) is list and len(states) == len(nodes):
        inert = Decoder(connection, nodes, inert=True)
        for node, state in zip(nodes, states):
            _apply(node, state, inert)


def _apply(node, state, decoder: Decoder) -> None:
    """Bring the grader's `node` to the `state` its copy in the kernel has after the call."""
    if type(state) is not tuple or not state or type(state[0]) is not str or state[0] == TAG_OPAQUE:
        return
    tag = state[0]
    try:
        if tag == TAG_TENSOR and isinstance(node, torch.Tensor):
            _apply_tensor(node, decoder.tensor(state[1:], 0))
        elif tag == TAG_LIST and type(node) is list and len(state) == 2:
            new = decoder.value((TAG_LIST, state[1]))
            new = [_keep_own(old, item) for old, item in zip(node, new)] + [_keep_own(_MISSING, item)
                                                                           for item in new[len(node):]]
            if not _same(node, new):
                node[:] = new
        elif tag == TAG_MAPPING and isinstance(node, dict) and len(state) == 3:
            new = decoder.value((TAG_MAPPING, state[1], "dict"))
            new = {key: _keep_own(node.get(key, _MISSING), item) for key, item in new.items()}
            if not _same(dict(node), new):
                node.clear()
                node.update(new)
        elif tag == TAG_GENERATOR and isinstance(node, torch.Generator) and len(state) == 2:
            if type(state[1]) is torch.Tensor and state[1].dtype == torch.uint8:
                node.set_state(state[1])
        elif tag == TAG_ATTRS and len(state) == 2 and type(state[1]) is list:
            for pair in state[1]:
                if type(pair) is list and len(pair) == 2 and type(pair[0]) is str and not _special(pair[0]):
                    try:
                        _apply_attribute(node.__dict__, pair[0], decoder.value(pair[1]))
                    except WireError:
                        pass        # that attribute stays as it was; the others still come back
    except (WireError, RuntimeError, TypeError, ValueError):
        pass        # a state that does not fit: the grader's argument stays as it was


def _apply_attribute(attributes: dict, name: str, value) -> None:
    current = attributes.get(name, _MISSING)
    new = _keep_own(current, value)
    if not _same(current, new):
        attributes[name] = new


def _special(name: str) -> bool:
    """A name Python or a library looks up on an object to decide how to treat it (numpy reads
    `__array_interface__` from an instance: a notebook could point an array at the judge's memory).
    No state a test's object needs back has one."""
    return name.startswith("__") and name.endswith("__")


def _keep_own(current, new):
    """The grader's own function, class or module where the kernel only names an object of its own:
    the kernel copy held the same one (a DataLoader's collate_fn), which it cannot send as data.
    A class or module comes back only where the grader's object already holds that very one."""
    if type(new) is KernelObject and isinstance(current, _STATELESS + (types.MethodType, functools.partial)):
        return current
    if _code_in(new) - _code_in(current):
        raise WireError("a class or module the notebook put on a test's object")
    return new


def _code_in(value) -> set[int]:
    """The classes and modules in `value` and its containers and records, by identity. A class the notebook
    put on a test's object would run here when the test's own code calls what it finds there (a hook on a
    model, a DataLoader's collate_fn): torch has classes that write a file or start a process when called."""
    found, stack, seen = set(), [value], set()
    while stack:
        item = stack.pop()
        if type(item) in SCALARS or id(item) in seen:
            continue
        seen.add(id(item))      # a decoded value is a tree of at most wire.MAX_ITEMS; the grader's own may have cycles
        if isinstance(item, (type, types.ModuleType)):
            found.add(id(item))
        elif type(item) in (list, tuple, set, frozenset):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif dataclasses.is_dataclass(item):
            stack.extend(vars(item).values())
    return found


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
    if type(a) in SCALARS:
        return a == b or (type(a) is float and math.isnan(a) and math.isnan(b))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) in (set, frozenset):
        return all(type(x) in SCALARS for x in a | b) and a == b
    if type(a) in (dict, OrderedDict, defaultdict):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a.items(), b.items()))
    if type(a) in (torch.device, torch.dtype, torch.Size):
        return a == b
    return False


# -- the arguments whose state comes back ---------------------------------------------------------------

MAX_NODES = 20000               # arguments' parts whose state is brought back after a call
_STATELESS = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, types.BuiltinMethodType,
              torch.device, torch.dtype, torch.Size)


def nodes_of(values) -> list:
    """Every part of `values` that a call can change, each once, in a fixed order."""
    nodes, seen, stack = [], set(), list(reversed(values))
    while stack and len(nodes) < MAX_NODES:
        value = stack.pop()
        kind = type(value)
        if kind in SCALARS or kind in (RemoteObject, KernelObject) or isinstance(value, _STATELESS) or id(value) in seen:
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


