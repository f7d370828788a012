"""The grader's side of grading outside the kernel: stand-ins for the student's names.

A test cell runs in the grader's own process (`course.grading.verdicts.judge`), which never runs
student code. The names the test takes from the notebook (the exercise's function or
class, a variable of the notebook) are bound to stand-ins (`RemoteObject`) that send each
use to the kernel, where `course.grading.kernel.answer_server` serves it, and turn what comes back into
values of the grader's own:

- requests go in as pickles of the grader's own objects (its models, tensors, probes,
  optimizers: only what the call needs), with the kernel's own objects named by number;
- answers come back as data only: `course.grading.verdicts.wire_decode.decode` reads them (JSON and raw tensor
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

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from course.grading.verdicts.connection import Channel




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
