"""What the kernel sends the grader: its answers as data (`pack`) and the frames around every message.

Sent into the kernel with the answer server (course.grading.kernel.loading) and run there in the server's
namespace, after the protocol's text: it uses only the standard library and torch, as the kernel has no
`course` package. The grader reads what `pack` wrote with `course.grading.verdicts.wire_decode.decode`, without
running anything from the sender.
"""

import ctypes as _ctypes
import json as _json
import struct as _struct

import torch as _torch

if "MAGIC" not in globals():
    from course.grading.kernel.protocol import (  # noqa: F401 - the kernel's copy needs no import
        HEADER,
        MAGIC,
        WIRE_BYTES,
        WIRE_COMPLEX,
        WIRE_DICT,
        WIRE_FLOAT,
        WIRE_TENSOR,
        WIRE_TUPLE,
    )


def pack(value):
    """`value` (None, bool, int, float, complex, str, bytes, plain tensors, and tuples, lists and dicts of
    these) as JSON plus the raw bytes of its tensors: what `course.grading.verdicts.wire_decode.decode` reads without running
    anything. Raises TypeError for anything else."""
    blobs = []

    def tree(v, depth):
        if depth > 200:
            raise TypeError("nested too deeply")
        kind = type(v)
        if kind is float and v != v or kind is float and v in (float("inf"), float("-inf")):
            return {WIRE_FLOAT: repr(v)}
        if kind in (type(None), bool, int, float, str):
            return v
        if kind is complex:
            return {WIRE_COMPLEX: [tree(v.real, depth + 1), tree(v.imag, depth + 1)]}
        if kind is bytes:
            blobs.append(v)
            return {WIRE_BYTES: len(blobs) - 1}
        if kind is _torch.Tensor:
            t = v.detach().contiguous()
            data = _ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""
            blobs.append(data)
            return {WIRE_TENSOR: [len(blobs) - 1, str(t.dtype).removeprefix("torch."), list(t.shape)]}
        if kind is tuple:
            return {WIRE_TUPLE: [tree(x, depth + 1) for x in v]}
        if kind is list:
            return [tree(x, depth + 1) for x in v]
        if kind is dict:
            return {WIRE_DICT: [[tree(k, depth + 1), tree(x, depth + 1)] for k, x in v.items()]}
        raise TypeError(f"{kind.__name__} is not data")

    header = _json.dumps({"v": tree(value, 0), "blobs": [len(b) for b in blobs]}).encode()
    return MAGIC + _struct.pack("!I", len(header)) + header + b"".join(blobs)


def receive_frame(sock):
    """The next message from the grader: a length, then that many bytes."""
    def exactly(n):
        chunks = []
        while n:
            chunk = sock.recv(min(n, 1 << 20))
            if not chunk:
                raise EOFError("the grader closed the connection")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    (size,) = HEADER.unpack(exactly(HEADER.size))
    return exactly(size)


def send_frame(sock, data):
    """`data` to the grader as one message."""
    sock.sendall(HEADER.pack(len(data)) + data)
