"""One test's conversation with the kernel's answer server: framing, requests and replies, the
arguments whose state comes back after a call, and the kernel's exceptions as the grader's own."""


from __future__ import annotations

import builtins
import copyreg
import io
import pickle
import socket
import types
from time import monotonic

import torch

from course.grading.contract import AnswerTimeout, KernelGone  # noqa: F401 - raised here, caught by the worker
from course.grading.kernel.protocol import (
    END,
    HEADER,
    HELLO,
    MAX_ANSWER,
    MAX_KEPT,
    OK,
    RAISE,
)
from course.grading.verdicts.standins import Decoder, KernelObject
from course.grading.verdicts.mirror import Files
from course.grading.verdicts.notes import Listener
from course.grading.verdicts.remote import RemoteObject
from course.grading.verdicts.state import global_state, set_global_state
from course.grading.verdicts.sync import apply_all, nodes_of
from course.grading.verdicts.wire_decode import WireError, decode

_EXCEPTIONS = {"UnpicklingError": pickle.UnpicklingError}


class Channel:
    """The kernel as one notebook's tests see it: the connection of the test that runs now, and the
    stand-ins for the kernel's objects, by number, which outlive a test as the objects do."""

    def __init__(self):
        self.connection: Connection | None = None
        self.objects: dict[int, RemoteObject] = {}


class Connection:
    """One test's conversation with the kernel's `_course_serve`."""

    def __init__(self, sock: socket.socket, deadline: float, channel: Channel | None = None,
                 files: "Files | None" = None, listener: "Listener | None" = None):
        self.sock, self.deadline = sock, deadline
        self.files = files
        self.listener = listener        # what the sandbox writes to the judge (course.grading.verdicts.notes)
        self.channel = channel or Channel()
        self.channel.connection = self
        self.requests = 0
        self.kernel_rng: torch.Tensor | None = None     # the kernel's random state as it last said
        self.kept: list[list] = []      # see answer_server._Server.kept: the same lists, in the same order

    # -- framing ---------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        self.sock.settimeout(max(0.1, self.deadline - monotonic()))
        try:
            self.sock.sendall(HEADER.pack(len(data)) + data)
        except OSError as error:
            raise KernelGone(f"the kernel stopped answering ({type(error).__name__})") from None

    def receive(self) -> bytes:
        size = HEADER.unpack(self._exactly(HEADER.size))[0]
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
        if type(hello) is not list or len(hello) != 2 or hello[0] != HELLO:
            raise WireError("the kernel did not greet as the answer server does")
        self.adopt(hello[1])

    def finish(self) -> None:
        self.send(END)
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
        nodes = nodes_of([fields.get("target"), fields.get("args"), tuple((fields.get("kwargs") or {}).values()),
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
        reply = self.reply()
        if type(reply) is not list or len(reply) < 6 or reply[0] not in (OK, RAISE):
            raise WireError("an answer of the wrong form")
        states, kept_states, kernel_state, files = reply[-4:]
        if self.files is not None:
            self.files.incoming(files)
        for kept, kept_state in zip(self.kept, kept_states if type(kept_states) is list else []):
            apply_all(self, kept, kept_state)
        apply_all(self, nodes, states)
        decoder = Decoder(self, nodes)
        self.adopt(kernel_state)
        if reply[0] == RAISE:
            raise exception_of(reply[1], reply[2])
        value = decoder.value(reply[1])
        if decoder.escaped:
            keep(self.kept, nodes)
        return value


    def reply(self):
        return decode(self.receive())


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


def exception_of(names, message) -> Exception:
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
