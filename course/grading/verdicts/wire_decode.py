"""Data-only values from the student's sandboxed process to the judge: `decode` reads an answer that the
kernel's `wire_encode.pack` wrote (the format: `course.grading.kernel.protocol`).

An answer is a JSON document (read by Python's `json`, which builds only dicts, lists, strings and
numbers) whose tagged parts stand for tuples, dicts, complex numbers, bytes and tensors, followed by the
raw bytes of the tensors, which become plain tensors of an allowed dtype (`torch.frombuffer`). Nothing is
unpickled, no class is looked up by name: a sender that sends something else (a pickle, a tensor subclass,
a dict subclass) gets a `WireError`, never a running object. Nothing here trusts the sender: `decode`
holds the whole guarantee.
"""

from __future__ import annotations

import json
import math
import struct

import torch

from course.grading.kernel.protocol import (
    MAGIC,
    SCALARS,
    WIRE_BYTES,
    WIRE_COMPLEX,
    WIRE_DICT,
    WIRE_FLOAT,
    WIRE_TENSOR,
    WIRE_TUPLE,
)

MAX_DEPTH = 64


class WireError(ValueError):
    """A value that may not cross between the student's process and the grader."""


_DTYPES = {name: getattr(torch, name) for name in (
    "float32", "float64", "float16", "bfloat16", "complex64", "complex128", "uint8", "int8", "int16", "int32",
    "int64", "bool")}


def decode(data: bytes):
    """The value `course.grading.kernel.wire_encode.pack` wrote, built without running anything from the sender."""
    if type(data) is not bytes or not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise WireError("not a data-only value")
    (size,) = struct.unpack("!I", data[len(MAGIC):len(MAGIC) + 4])
    start = len(MAGIC) + 4
    try:
        header = json.loads(data[start:start + size])
    except (ValueError, RecursionError):
        raise WireError("not a data-only value: its JSON does not read") from None
    if type(header) is not dict or set(header) != {"v", "blobs"} or type(header["blobs"]) is not list \
            or not all(type(n) is int and n >= 0 for n in header["blobs"]):
        raise WireError("not a data-only value: a header of the wrong form")
    blobs, offset = [], start + size
    for n in header["blobs"]:
        blobs.append(data[offset:offset + n])
        offset += n
    if offset != len(data):
        raise WireError("not a data-only value: its parts do not add up")
    try:
        return _checked(_tree(header["v"], blobs, 0, [MAX_ITEMS]), 0)
    except RecursionError:
        raise WireError("nested too deeply") from None


def _tree(item, blobs: list, depth: int, left: list):
    """The value a JSON `item` stands for (see `course.grading.kernel.wire_encode.pack`); `left`: how many more values
    this answer may hold."""
    if depth > MAX_DEPTH * 2:
        raise WireError("nested too deeply")
    left[0] -= 1
    if left[0] < 0:
        raise WireError(f"more than {MAX_ITEMS} values in one answer")
    kind = type(item)
    if kind in (type(None), bool, int, float, str):
        return item
    if kind is list:
        return [_tree(v, blobs, depth + 1, left) for v in item]
    if kind is not dict or len(item) != 1:
        raise WireError("not a data-only value: an untagged object")
    (tag, body), = item.items()
    if tag == WIRE_TUPLE and type(body) is list:
        return tuple(_tree(v, blobs, depth + 1, left) for v in body)
    if tag == WIRE_DICT and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        return {hash_safe(_tree(k, blobs, depth + 1, left)): _tree(v, blobs, depth + 1, left) for k, v in body}
    if tag == WIRE_COMPLEX and type(body) is list and len(body) == 2:
        return complex(*(float(_tree(v, blobs, depth + 1, left)) for v in body))
    if tag == WIRE_FLOAT and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == WIRE_BYTES and type(body) is int and 0 <= body < len(blobs):
        return blobs[body]
    if tag == WIRE_TENSOR and type(body) is list and len(body) == 3:
        return _tensor(*body, blobs)
    raise WireError("not a data-only value: an unknown tag")


MAX_ITEMS = 1_000_000       # values in one answer: the most an honest one holds is far less (tensors are blobs)
_HASH_SAFE = 2 ** 53        # ints and floats beyond this can be chosen to share one hash (a dict built in O(n²))


def hash_safe(key, depth: int = 0):
    """`key`, if it may be a dict key or set item built from what the kernel sent: a string (its hash is
    salted per process), a bool, None, a number of at most 2**53, or a short tuple of these. Else WireError."""
    kind = type(key)
    if kind in (str, bytes, bool, type(None), torch.device, torch.dtype) \
            or kind in (int, float) and -_HASH_SAFE < key < _HASH_SAFE \
            or kind.__hash__ in (object.__hash__, torch.Tensor.__hash__):    # by identity: a tensor, a stand-in
        return key
    if kind is tuple and len(key) <= 16 and depth < 4:
        for part in key:
            hash_safe(part, depth + 1)
        return key
    raise WireError(f"a {kind.__name__} that may not be a dict key or set item here")


def _tensor(index, dtype_name, shape, blobs) -> torch.Tensor:
    if type(index) is not int or not 0 <= index < len(blobs) or type(dtype_name) is not str \
            or dtype_name not in _DTYPES or type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError("not a data-only value: a tensor of the wrong form")
    dtype, blob = _DTYPES[dtype_name], blobs[index]
    count = math.prod(shape)
    if len(blob) != count * torch.empty((), dtype=dtype).element_size():
        raise WireError("not a data-only value: a tensor whose bytes do not fill its shape")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(blob), dtype=dtype).reshape(shape)


def _checked(value, depth):
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind is torch.Tensor:
        return value
    if kind is tuple:
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
