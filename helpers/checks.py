"""Checks for tests and for students: a failure says what was expected and what was got.

Every check raises `AssertionError` with a message that starts with `what` (the thing
being checked, in the student's words) so that a failing test reads like a sentence:

    AssertionError: output of TinyMLP(2, 8, 1) on a batch of 5: expected shape (5, 1), got (5, 8)
"""

import math
import os
import site
import sys

import torch


def _fail(what: str, expected, got, hint: str = "") -> None:
    message = f"{what}: expected {expected}, got {got}"
    if hint:
        message += f". {hint}"
    raise AssertionError(message)


def _describe_shape(shape) -> str:
    return str(tuple(shape))


def _tensor(value: torch.Tensor) -> torch.Tensor:
    """A plain torch.Tensor view of `value`: a subclass's own .shape, .detach() or .to() are not asked."""
    return value if type(value) is torch.Tensor else torch.Tensor.as_subclass(value, torch.Tensor)


def _local(value):
    """`value` as a plain value. When `course grade` runs a test outside the notebook, a tensor that
    still holds its autograd graph stays in the notebook's process and the test gets a stand-in for it
    (see course/remote.py): a check looks at its values, fetched without the graph."""
    local = getattr(type(value), "__course_local__", None)
    return local(value) if local is not None else value


def check_type(value, expected_type, what: str) -> None:
    """`value` is an instance of `expected_type` (a type or a tuple of types).

    By `type(value)`, which an object cannot fake, unlike the `__class__` isinstance() asks.
    """
    value = _local(value)
    claims = getattr(type(value), "__course_is__", None)    # an object left in the notebook (see _local)
    if claims is not None and claims(value, expected_type):
        return
    if not issubclass(type(value), expected_type):
        names = (expected_type.__name__ if isinstance(expected_type, type)
                 else " or ".join(t.__name__ for t in expected_type))
        _fail(what, f"a {names}", f"{type(value).__name__} {value!r:.80}")


def check_shape(tensor, expected_shape, what: str) -> None:
    """`tensor` is a tensor whose shape is `expected_shape`."""
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    if tuple(tensor.shape) != tuple(expected_shape):
        _fail(what, f"shape {_describe_shape(expected_shape)}", _describe_shape(tensor.shape))


def check_dtype(tensor, expected_dtype: torch.dtype, what: str) -> None:
    """`tensor` is a tensor of dtype `expected_dtype`."""
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    if tensor.dtype != expected_dtype:
        _fail(what, f"dtype {expected_dtype}", tensor.dtype)


def check_device(tensor, expected_device, what: str) -> None:
    """`tensor` lives on `expected_device` (`cuda` matches `cuda:0` on a one-GPU machine)."""
    tensor = _local(tensor)
    check_type(tensor, torch.Tensor, what)
    tensor = _tensor(tensor)
    expected = torch.device(expected_device)
    got = tensor.device
    if not _device_matches(got, expected):
        _fail(what, f"device {expected}", got, "Move it with .to(device)")


def _device_matches(got: torch.device, expected: torch.device) -> bool:
    return got.type == expected.type and (expected.index is None or got.index in (expected.index, None))


def check_equal(value, expected, what: str) -> None:
    """`value == expected` for plain Python values (ints, strings, tuples, ...).

    Python's own == decides, not the value's: a student's object whose == says yes to
    everything (a subclass of int or tuple, or any class of its own) does not pass.
    """
    value = _local(value)
    if not _equal(_plain(value), _plain(expected)):
        _fail(what, repr(expected), repr(value))


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
        if verdict is NotImplemented and not _own_comparison(type(value)):
            verdict = value == expected      # a 0-d tensor, a numpy integer: their library compares them
        return verdict is not NotImplemented and bool(verdict)
    return bool(value == expected)      # the test's own kind of value: it knows how to compare


def _own_comparison(kind: type) -> bool:
    """Whether `kind` brings a comparison written in Python outside the installed libraries (in a
    notebook): its own == or !=, or numpy's or torch's hooks through which == reaches it."""
    for name in ("__eq__", "__ne__", "__bool__", "__array_ufunc__", "__array_function__", "__torch_function__",
                 "__torch_dispatch__"):
        code = getattr(getattr(kind, name, None), "__code__", None)
        if code is not None and not code.co_filename.startswith(_INSTALLED):
            return True
    return False


_INSTALLED = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), os.path.dirname(os.__file__)})


def check_close(value, expected, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Numbers or tensors equal within tolerance; tensors must also agree in shape.

    Accepts Python numbers, tensors, or one of each: a one-element tensor compared
    with a number is compared by value.
    """
    value, expected = _local(value), _local(expected)
    if isinstance(expected, torch.Tensor) or isinstance(value, torch.Tensor):
        if not issubclass(type(value), torch.Tensor):
            if isinstance(value, (int, float)) and expected.numel() == 1:
                value = torch.tensor(float(value))
            else:
                _fail(what, "a tensor", f"{type(value).__name__} {value!r:.80}")
        expected_t = torch.as_tensor(expected, dtype=torch.float64).cpu()
        value_t = _tensor(value).detach().to("cpu", torch.float64)
        if expected_t.numel() == 1 and value_t.numel() == 1:
            value_t, expected_t = value_t.reshape(()), expected_t.reshape(())
        if value_t.shape != expected_t.shape:
            _fail(what, f"shape {_describe_shape(expected_t.shape)}", _describe_shape(value_t.shape))
        if not torch.allclose(value_t, expected_t, rtol=rtol, atol=atol, equal_nan=False):
            worst = (value_t - expected_t).abs().max().item()
            _fail(what, f"values close to {_short(expected_t)}", f"{_short(value_t)} (largest difference {worst:.3g})")
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        _fail(what, "a number", f"{type(value).__name__} {value!r:.80}")
    if not math.isclose(value, expected, rel_tol=rtol, abs_tol=atol):
        _fail(what, f"{expected:.6g}", f"{value:.6g}")


def _short(t: torch.Tensor) -> str:
    """A tensor's values in one line, truncated for long tensors."""
    flat = t.flatten().tolist()
    shown = ", ".join(f"{v:.4g}" for v in flat[:6])
    more = f", ... ({len(flat)} values)" if len(flat) > 6 else ""
    return f"[{shown}{more}]"


def check_raises(exception_type, fn, what: str, *args, **kwargs) -> BaseException:
    """Calling `fn(*args, **kwargs)` raises `exception_type`; returns the exception."""
    try:
        result = fn(*args, **kwargs)
    except exception_type as exc:
        return exc
    except NotImplementedError:
        raise  # an exercise not written yet says so, as in every other test
    except Exception as exc:  # the wrong kind of error is a wrong answer, not a crash
        _fail(what, f"{exception_type.__name__} to be raised", f"{type(exc).__name__}: {exc}")
    _fail(what, f"{exception_type.__name__} to be raised", f"no error, the result {result!r:.80}")


def check_loss_plot(fig, history: dict, what: str) -> None:
    """`fig` is a matplotlib Figure whose first axes plots `history["train_loss"]` and
    `history["val_loss"]` against the epochs 0..n-1 as lines labelled with "train" and "val",
    has a legend, an x label with "epoch", a y label with "loss", and marks `history["best_epoch"]`
    (a vertical line there, or a point at `(best_epoch, val_loss[best_epoch])`)."""
    import numpy as np
    from matplotlib.figure import Figure

    check_type(fig, Figure, f"{what} (return the Figure: fig, ax = plt.subplots() ... return fig)")
    if not fig.axes:
        _fail(what, "a figure with an axes", "a figure without axes")
    ax = fig.axes[0]
    n = len(history["train_loss"])

    def curve(word):
        found = [line for line in ax.get_lines() if word in str(line.get_label()).lower()
                 and not str(line.get_label()).startswith("_")]
        return found[0] if found else None

    curves = []
    for word, key in (("train", "train_loss"), ("val", "val_loss")):
        line = curve(word)
        if line is None:
            _fail(what, f"a line labelled with '{word}' (ax.plot(..., label='{word}...'))", "none")
        if not np.allclose(np.asarray(line.get_xdata(), dtype=float), np.arange(n)):
            _fail(f"{what}: the x values of the '{word}' line", f"the epochs 0..{n - 1}", list(line.get_xdata())[:8])
        if not np.allclose(np.asarray(line.get_ydata(), dtype=float), history[key]):
            _fail(f"{what}: the y values of the '{word}' line", f"history['{key}']", list(line.get_ydata())[:8])
        curves.append(line)
    check_equal("epoch" in ax.get_xlabel().lower(), True, f"{what}: the x-axis label {ax.get_xlabel()!r} mentions 'epoch'")
    check_equal("loss" in ax.get_ylabel().lower(), True, f"{what}: the y-axis label {ax.get_ylabel()!r} mentions 'loss'")
    check_equal(ax.get_legend() is not None, True, f"{what}: a legend on the axes (ax.legend())")
    best = history["best_epoch"]
    x, y = best, history["val_loss"][best]
    marked = False
    for line in ax.get_lines():
        if any(line is c for c in curves):
            continue
        xs, ys = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
        if (len(xs) and np.allclose(xs, x)) or any(np.isclose(a, x) and np.isclose(b, y) for a, b in zip(xs, ys)):
            marked = True
    for collection in ax.collections:
        if any(np.allclose(point, (x, y)) for point in np.asarray(collection.get_offsets(), dtype=float)):
            marked = True
    marked = marked or any(np.allclose(getattr(text, "xy", (np.nan, np.nan)), (x, y)) or
                           np.isclose(getattr(text, "xy", (np.nan,))[0], x) for text in ax.texts)
    check_equal(marked, True, f"{what}: a mark at the best epoch {best} (ax.axvline({best}) or a marker at that point)")
