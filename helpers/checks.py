"""Checks for tests and for students: a failure says what was expected and what was got.

Every check raises `AssertionError` with a message that starts with `what` (the thing
being checked, in the student's words) so that a failing test reads like a sentence:

    AssertionError: output of TinyMLP(2, 8, 1) on a batch of 5: expected shape (5, 1), got (5, 8)

A hint, where a check takes one, names the fix for that test's case. Every check sets
`__tracebackhide__`, so that IPython's tracebacks (Validate's among them) skip the course's own
frames and end at the test's line and the student's; while a student works, a test cell shows
the message first (`helpers.exercises`).
"""

import math
import sys

import torch


def _failure(what: str, expected, got, hint: str = "") -> AssertionError:
    """The error a check raises itself (`raise _failure(...)`): a traceback then ends in the check's
    own frame, which IPython hides with the others (it never hides the frame that raised)."""
    message = f"{what}: expected {_cut(expected)}, got {_cut(got)}"
    if hint:
        message += f". {hint}"
    return AssertionError(message)


def _cut(text, limit: int = 2000) -> str:
    """At most `limit` characters of `text`: a value's repr can run to megabytes."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"


def _brief(value, limit: int = 80) -> str:
    """`value`'s repr in at most `limit` characters, with an ellipsis where it was cut."""
    if _kind(value) == "Tensor" and type(value) is not torch.Tensor:
        value = _tensor(value)                  # a probe's tensor shows as the tensor it is
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _kind(value) -> str:
    """The name of `value`'s type as a student knows it: a tensor of one of the course's probe classes (a
    batch that records its moves, a tensor on a pretend GPU) is a `Tensor`."""
    kind = type(value)
    if issubclass(kind, torch.Tensor) and kind.__module__.startswith("helpers."):
        return "Tensor"
    return kind.__name__


def _describe_shape(shape) -> str:
    return str(tuple(shape))


def _tensor(value: torch.Tensor) -> torch.Tensor:
    """A plain torch.Tensor view of `value`: a subclass's own .shape, .detach() or .to() are not asked."""
    return value if type(value) is torch.Tensor else torch.Tensor.as_subclass(value, torch.Tensor)


def _local(value):
    """`value` as a plain value. When `course grade` runs a test outside the notebook, a tensor that
    still holds its autograd graph stays in the notebook's process and the test gets a stand-in for it
    (see course/grading/verdicts/remote.py): a check looks at its values, fetched without the graph."""
    local = getattr(type(value), "__course_local__", None)
    return local(value) if local is not None else value


def check_type(value, expected_type, what: str) -> None:
    """`value` is an instance of `expected_type` (a type or a tuple of types).

    By `type(value)`, which an object cannot fake, unlike the `__class__` isinstance() asks.
    """
    __tracebackhide__ = True
    value = _local(value)
    claims = getattr(type(value), "__course_is__", None)    # an object left in the notebook (see _local)
    if claims is not None and claims(value, expected_type):
        return
    if not issubclass(type(value), expected_type):
        names = (expected_type.__name__ if isinstance(expected_type, type)
                 else " or ".join(t.__name__ for t in expected_type))
        raise _failure(what, f"a {names}", f"{_kind(value)} {_brief(value)}")


def check_shape(tensor, expected_shape, what: str) -> None:
    """`tensor` is a tensor whose shape is `expected_shape`."""
    __tracebackhide__ = True
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    if tuple(tensor.shape) != tuple(expected_shape):
        raise _failure(what, f"shape {_describe_shape(expected_shape)}", _describe_shape(tensor.shape))


def check_dtype(tensor, expected_dtype: torch.dtype, what: str) -> None:
    """`tensor` is a tensor of dtype `expected_dtype`."""
    __tracebackhide__ = True
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    if tensor.dtype != expected_dtype:
        raise _failure(what, f"dtype {expected_dtype}", tensor.dtype)


def check_device(tensor, expected_device, what: str, hint: str = "") -> None:
    """`tensor` lives on `expected_device` (`cuda` matches `cuda:0` on a one-GPU machine).

    `hint` names the fix for this test's case: a wrong device has many causes (a forgotten
    `.to(device)`, a container not looked into, a layer not registered, an input changed in place)."""
    __tracebackhide__ = True
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    expected = torch.device(expected_device)
    got = tensor.device
    if not _device_matches(got, expected):
        raise _failure(what, f"device {expected}", got, hint)


def _device_matches(got: torch.device, expected: torch.device) -> bool:
    return got.type == expected.type and (expected.index is None or got.index in (expected.index, None))


def check_equal(value, expected, what: str) -> None:
    """`value == expected` for plain Python values (ints, strings, tuples, ...).

    Python's own == decides, not the value's: a student's object whose == says yes to
    everything (a subclass of int or tuple, or any class of its own) does not pass.
    """
    __tracebackhide__ = True
    value = _local(value)
    if not _equal(_plain(value), _plain(expected)):
        raise _failure(what, repr(expected), repr(value))


_PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)


def _plain(value):
    """`value` as the plain Python data it claims to be: a subclass of int, str, tuple, ...
    (torch.Size and numpy's float64 are ones too) rebuilt by the base type's own methods."""
    kind = type(value)
    if kind in (type(None), bool, int, float, complex, str, bytes):
        return value
    for base in (int, float, complex, str, bytes):      # bool cannot be subclassed
        if issubclass(kind, base):
            return {int: int.__int__, float: float.__float__, complex: complex.__complex__,
                    str: str.__str__, bytes: bytes.__bytes__}[base](value)
    for base in (tuple, list, set, frozenset):
        if issubclass(kind, base):
            return base(_plain(item) for item in base.__iter__(value))
    if issubclass(kind, dict):
        return {_plain(k): _plain(v) for k, v in dict.items(value)}
    return value


def _equal(value, expected) -> bool:
    if type(expected) in _PLAIN_TYPES:
        if type(expected) in (tuple, list) and type(value) is type(expected):
            return len(value) == len(expected) and all(_equal(v, e) for v, e in zip(value, expected))
        if type(expected) is dict and type(value) is dict:
            return value.keys() == expected.keys() and all(_equal(value[k], expected[k]) for k in expected)
        verdict = type(expected).__eq__(expected, value)
        if verdict is NotImplemented and type(value) in _PLAIN_TYPES:
            verdict = type(value).__eq__(value, expected)        # 1 == 1.0
        if verdict is NotImplemented and _library_value(value):
            verdict = value == expected      # a 0-d tensor, a numpy integer: their library compares them
        return verdict is not NotImplemented and bool(verdict)
    return bool(value == expected)      # the test's own kind of value: it knows how to compare


def _library_value(value) -> bool:
    """Is `value` of one of torch's or numpy's own types (not a subclass), whose == their library defines?
    Decided by what the value is: any other object's == would be its own code (a class of the notebook's,
    or, under `course grade`, a stand-in whose comparison would run in the student's process)."""
    kind = type(value)
    if kind in (torch.Tensor, torch.nn.Parameter):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and (kind is numpy.ndarray or kind in numpy.sctypeDict.values())


def check_close(value, expected, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Numbers or tensors equal within tolerance; tensors must also agree in shape.

    Accepts Python numbers, tensors, or one of each: a one-element tensor compared
    with a number is compared by value.
    """
    __tracebackhide__ = True
    value, expected = _local(value), _local(expected)
    if isinstance(expected, torch.Tensor) or isinstance(value, torch.Tensor):
        if not issubclass(type(value), torch.Tensor):
            if isinstance(value, (int, float)) and expected.numel() == 1:
                value = torch.tensor(float(value))
            else:
                raise _failure(what, "a tensor", f"{_kind(value)} {_brief(value)}")
        expected_t = torch.as_tensor(expected, dtype=torch.float64).cpu()
        value_t = _tensor(value).detach().to("cpu", torch.float64)
        if expected_t.numel() == 1 and value_t.numel() == 1:
            value_t, expected_t = value_t.reshape(()), expected_t.reshape(())
        if value_t.shape != expected_t.shape:
            raise _failure(what, f"shape {_describe_shape(expected_t.shape)}", _describe_shape(value_t.shape))
        if not torch.allclose(value_t, expected_t, rtol=rtol, atol=atol, equal_nan=False):
            worst = (value_t - expected_t).abs().max().item()
            raise _failure(what, f"values close to {_short(expected_t)}", f"{_short(value_t)} (largest difference {worst:.3g})")
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _failure(what, "a number", f"{_kind(value)} {_brief(value)}")
    if not math.isclose(value, expected, rel_tol=rtol, abs_tol=atol):
        raise _failure(what, f"{expected:.6g}", f"{value:.6g}")


def _short(t: torch.Tensor) -> str:
    """A tensor's values in one line, truncated for long tensors."""
    flat = t.flatten().tolist()
    shown = ", ".join(f"{v:.4g}" for v in flat[:6])
    more = f", ... ({len(flat)} values)" if len(flat) > 6 else ""
    return f"[{shown}{more}]"


def check_raises(exception_type, fn, what: str, *args, **kwargs) -> BaseException:
    """Calling `fn(*args, **kwargs)` raises `exception_type`; returns the exception."""
    __tracebackhide__ = True
    try:
        result = fn(*args, **kwargs)
    except exception_type as exc:
        return exc
    except NotImplementedError:
        raise  # an exercise not written yet says so, as in every other test
    except Exception as exc:  # the wrong kind of error is a wrong answer, not a crash
        raise _failure(what, f"{exception_type.__name__} to be raised", f"{type(exc).__name__}: {exc}")
    raise _failure(what, f"{exception_type.__name__} to be raised", f"no error, the result {_brief(result)}")


def check_loss_plot(fig, history: dict, what: str) -> None:
    """`fig`, a matplotlib Figure drawn here, plots `history` with its best epoch marked: read as data, then
    judged by `helpers.plot_reading.check_loss_plot` (which says what counts). A test of a student's plot
    reads it where it was drawn instead: `plot_reading.plot_facts`."""
    __tracebackhide__ = True
    from matplotlib.figure import Figure

    from helpers import plot_reading

    check_type(fig, Figure, f"{what} (return the Figure: fig, ax = plt.subplots() ... return fig)")
    plot_reading.check_loss_plot(plot_reading.read_figure(fig), history, what)
