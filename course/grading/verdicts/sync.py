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
from course.grading.verdicts.standins import Decoder, KernelObject
from course.grading.verdicts.remote import RemoteObject
from course.grading.verdicts.wire_decode import WireError

if TYPE_CHECKING:
    from course.grading.verdicts.connection import Connection

_MISSING = object()
# Exceptions that are not builtins but that tests name (torch.load's refusal).
# -- changed arguments into the grader's originals ------------------------------------------------------

def apply_all(connection: Connection, nodes: list, states) -> None:
    if type(states) is list and len(states) == len(nodes):
        inert = Decoder(connection, nodes, inert=True)
        admission = _Admission(nodes)
        for node, state in zip(nodes, states):
            _apply(node, state, inert, admission)


def _apply(node, state, decoder: Decoder, admission: _Admission) -> None:
    """Bring the grader's `node` to the `state` its copy in the kernel has after the call."""
    if type(state) is not tuple or not state or type(state[0]) is not str or state[0] == TAG_OPAQUE:
        return
    tag = state[0]
    try:
        if tag == TAG_TENSOR and isinstance(node, torch.Tensor):
            _apply_tensor(node, decoder.tensor(state[1:], 0))
        elif tag == TAG_LIST and type(node) is list and len(state) == 2:
            new = decoder.value((TAG_LIST, state[1]))
            new = [admission.admit(node[i] if i < len(node) else _MISSING, item) for i, item in enumerate(new)]
            if not _same(node, new):
                node[:] = new
        elif tag == TAG_MAPPING and isinstance(node, dict) and len(state) == 3:
            new = decoder.value((TAG_MAPPING, state[1], "dict"))
            new = {admission.admit_key(key): admission.admit(node.get(key, _MISSING), item) for key, item in new.items()}
            if not _same(dict(node), new):
                node.clear()
                node.update(new)
        elif tag == TAG_GENERATOR and isinstance(node, torch.Generator) and len(state) == 2:
            if type(state[1]) is torch.Tensor and state[1].dtype == torch.uint8:
                node.set_state(state[1])
        elif tag == TAG_ATTRS and len(state) == 2 and type(state[1]) is list \
                and type(getattr(node, "__dict__", None)) is dict:
            attributes = node.__dict__
            for pair in state[1]:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str or _special(pair[0]):
                    continue
                try:
                    value = decoder.value(pair[1])
                except WireError:
                    continue        # that attribute stays as it was; the others still come back
                current = attributes.get(pair[0], _MISSING)
                new = admission.admit(current, value)
                if not _same(current, new):
                    attributes[pair[0]] = new
    except (WireError, RuntimeError, TypeError, ValueError):
        pass        # a state that does not fit: the grader's argument stays as it was


class Refused:
    """In an argument's state, what the judge would not take from the kernel, in its place (a hook still
    counts as a hook): it does nothing here, and using it fails. Sent back to the kernel, it is a string."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"<{self.what} the judge refused>"

    def __reduce__(self):
        return str, (repr(self),)


class _Admission:
    """What of a call's changed arguments may come into the grader's objects. A class or module only where the
    test's arguments already held that very one: one the notebook put there would run here when the test's own
    code calls what it finds (a hook on a model, a DataLoader's collate_fn), and torch has classes that write a
    file or start a process when called. No dunder name as a key either: nn.Module hands out its dicts' entries
    as attributes, and numpy reads `__array_interface__` from an object (an array over the judge's memory)."""

    def __init__(self, nodes: list):
        self.own = {id(node) for node in nodes}     # the grader's arguments, which a state may refer back to
        self.known = _code_in(nodes)
        self.verdicts: dict[int, tuple[object, bool]] = {}  # id -> (the value, kept alive; refused?)

    def admit(self, current, new):
        """`new` for the grader's object where it held `current`; the grader's own function, class or module where
        the kernel only names an object of its own (the kernel copy held the same one, a DataLoader's collate_fn,
        which it cannot send as data)."""
        if type(new) is KernelObject and isinstance(current, _STATELESS + (types.MethodType, functools.partial)):
            return current
        return Refused(type(new).__name__) if self.refused(new) else new

    def admit_key(self, key):
        return Refused("a key") if self.refused(key) else key

    def refused(self, value) -> bool:
        kind = type(value)
        if kind in SCALARS:
            return kind is str and _special(value)
        found = self.verdicts.get(id(value))
        if found is not None:
            return found[1]
        if id(value) in self.own:
            verdict = False
        elif isinstance(value, (type, types.ModuleType)):
            verdict = id(value) not in self.known
        elif kind in (list, tuple, set, frozenset):
            verdict = any(self.refused(item) for item in value)
        elif isinstance(value, dict):
            verdict = any(self.refused(key) or self.refused(item) for key, item in value.items())
        elif dataclasses.is_dataclass(value):
            verdict = any(self.refused(item) for item in vars(value).values())
        else:
            verdict = False
        self.verdicts[id(value)] = (value, verdict)     # each object once: a value may hold one list many times
        return verdict


def _code_in(nodes: list) -> set[int]:
    """The classes and modules the grader's arguments hold (their containers' items, their objects'
    attributes), by identity."""
    found, seen = set(), set()
    stack = [vars(node) if type(getattr(node, "__dict__", None)) is dict and not isinstance(node, (list, dict))
             else node for node in nodes]
    while stack:
        item = stack.pop()
        if type(item) in SCALARS or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (type, types.ModuleType)):
            found.add(id(item))
        elif type(item) in (list, tuple, set, frozenset):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(vars(item).values())
    return found


def _special(name: str) -> bool:
    """A name Python or a library looks up on an object to decide how to treat it. No state a test's
    object needs back has one."""
    return name.startswith("__") and name.endswith("__")


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


