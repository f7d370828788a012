"""Checks for tests and for students: a failure says what was expected and what was got.

Every check raises `AssertionError` with a message that starts with `what` (the thing
being checked, in the student's words) so that a failing test reads like a sentence:

    AssertionError: output of TinyMLP(2, 8, 1) on a batch of 5: expected shape (5, 1), got (5, 8)
"""

import math

import torch


def _fail(what: str, expected, got, hint: str = "") -> None:
    message = f"{what}: expected {expected}, got {got}"
    if hint:
        message += f". {hint}"
    raise AssertionError(message)


def _describe_shape(shape) -> str:
    return str(tuple(shape))


def check_type(value, expected_type, what: str) -> None:
    """`value` is an instance of `expected_type` (a type or a tuple of types)."""
    if not isinstance(value, expected_type):
        names = (expected_type.__name__ if isinstance(expected_type, type)
                 else " or ".join(t.__name__ for t in expected_type))
        _fail(what, f"a {names}", f"{type(value).__name__} {value!r:.80}")


def check_shape(tensor, expected_shape, what: str) -> None:
    """`tensor` is a tensor whose shape is `expected_shape`."""
    check_type(tensor, torch.Tensor, what)
    if tuple(tensor.shape) != tuple(expected_shape):
        _fail(what, f"shape {_describe_shape(expected_shape)}", _describe_shape(tensor.shape))


def check_dtype(tensor, expected_dtype: torch.dtype, what: str) -> None:
    """`tensor` is a tensor of dtype `expected_dtype`."""
    check_type(tensor, torch.Tensor, what)
    if tensor.dtype != expected_dtype:
        _fail(what, f"dtype {expected_dtype}", tensor.dtype)


def check_device(tensor, expected_device, what: str) -> None:
    """`tensor` lives on `expected_device` (`cuda` matches `cuda:0` on a one-GPU machine)."""
    check_type(tensor, torch.Tensor, what)
    expected = torch.device(expected_device)
    got = tensor.device
    same = got.type == expected.type and (expected.index is None or got.index in (expected.index, None))
    if not same:
        _fail(what, f"device {expected}", got, "Move it with .to(device)")


def check_equal(value, expected, what: str) -> None:
    """`value == expected` for plain Python values (ints, strings, tuples, ...)."""
    if value != expected:
        _fail(what, repr(expected), repr(value))


def check_close(value, expected, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Numbers or tensors equal within tolerance; tensors must also agree in shape.

    Accepts Python numbers, tensors, or one of each: a one-element tensor compared
    with a number is compared by value.
    """
    if isinstance(expected, torch.Tensor) or isinstance(value, torch.Tensor):
        if not isinstance(value, torch.Tensor):
            if isinstance(value, (int, float)) and expected.numel() == 1:
                value = torch.tensor(float(value))
            else:
                _fail(what, "a tensor", f"{type(value).__name__} {value!r:.80}")
        expected_t = torch.as_tensor(expected, dtype=torch.float64).cpu()
        value_t = value.detach().to("cpu", torch.float64)
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
    except Exception as exc:  # the wrong kind of error is a wrong answer, not a crash
        _fail(what, f"{exception_type.__name__} to be raised", f"{type(exc).__name__}: {exc}")
    _fail(what, f"{exception_type.__name__} to be raised", f"no error, the result {result!r:.80}")
