"""Data-only values between a student's sandboxed process and the grader (issue 15's first part).

The grader must decide every verdict in a process that never runs student code. What
crosses from the student's side is therefore data only, and it is decoded without
running anything the student wrote:

- `encode` (run on the student's side) turns an answer into bytes. It accepts None,
  bools, ints, floats, complex numbers, strings, bytes, tensors, and tuples, lists and
  dicts of these (a `state_dict` is a dict of tensors); an exception travels as its
  type's name and its message. Anything else is refused there, by type.
- `decode` (run in the grader) reads those bytes with `torch.load(weights_only=True)`,
  whose unpickler builds only plain containers, numbers, strings and tensors and refuses
  every other class, then walks the result and accepts each value only by its exact
  `type()`. A student's side that sends something else (a forged byte stream, a tensor
  subclass, a dict subclass) gets a `WireError`, never a running object.

Nothing here trusts the sender: `encode` is a convenience for an honest sender, and
`decode` holds the whole guarantee.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import torch

SCALARS = (type(None), bool, int, float, complex, str, bytes)
_EXCEPTION_TAG = "__course_wire_exception__"
MAX_DEPTH = 64


class WireError(ValueError):
    """A value that may not cross between the student's process and the grader."""


@dataclass(frozen=True)
class RemoteError:
    """An exception raised on the student's side, as data: its type's name and its message."""

    type_name: str
    message: str

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}"


def encode(value) -> bytes:
    """Bytes holding `value` as data; raises `WireError` for anything that is not data."""
    buffer = io.BytesIO()
    torch.save(_plain(value, 0), buffer)
    return buffer.getvalue()


def decode(data: bytes):
    """The value `encode` wrote, built without running anything from the sender."""
    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as error:  # the unpickler refused a class, or the bytes are not a checkpoint
        raise WireError(f"not a data-only value: {type(error).__name__}") from None
    return _checked(loaded, 0)


def _plain(value, depth):
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    kind = type(value)
    if kind in SCALARS:
        return value
    if isinstance(value, BaseException):
        return (_EXCEPTION_TAG, type(value).__name__, str(value))
    if isinstance(value, RemoteError):
        return (_EXCEPTION_TAG, value.type_name, value.message)
    if isinstance(value, torch.Tensor):
        # A plain tensor of the same values: no subclass, no autograd history, on the CPU.
        return value.detach().to("cpu").as_subclass(torch.Tensor).clone()
    if isinstance(value, tuple):
        return tuple(_plain(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dict):  # OrderedDict (a state_dict) included: it travels as a dict
        return {_key(k): _plain(v, depth + 1) for k, v in value.items()}
    raise WireError(f"{kind.__name__} is not data")


def _key(key):
    if type(key) not in (str, int):
        raise WireError(f"dict keys must be str or int, not {type(key).__name__}")
    return key


def _checked(value, depth):
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind is torch.Tensor:
        return value
    if kind is tuple:
        if len(value) == 3 and value[0] == _EXCEPTION_TAG and all(type(v) is str for v in value[1:]):
            return RemoteError(value[1], value[2])
        return tuple(_checked(v, depth + 1) for v in value)
    if kind is list:
        return [_checked(v, depth + 1) for v in value]
    if kind is dict or kind.__module__ == "collections" and kind.__name__ == "OrderedDict":
        out = {}
        for k, v in value.items():
            if type(k) not in (str, int):
                raise WireError(f"dict keys must be str or int, not {type(k).__name__}")
            out[k] = _checked(v, depth + 1)
        return out
    raise WireError(f"{kind.__name__} is not data")
