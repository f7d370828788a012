"""helpers.checks: what a failed check says, and that it asks the real type and the real value."""

import numpy as np
import pytest
import torch

from helpers import checks


@pytest.mark.parametrize("call, fragment", [
    (lambda: checks.check_shape(torch.zeros(5, 8), (5, 1), "output"), "output: expected shape (5, 1), got (5, 8)"),
    (lambda: checks.check_dtype(torch.zeros(2), torch.int64, "labels"),
     "labels: expected dtype torch.int64, got torch.float32"),
    (lambda: checks.check_device(torch.zeros(2), "meta", "batch"), "batch: expected device meta, got cpu"),
    (lambda: checks.check_equal(3, 4, "count"), "count: expected 4, got 3"),
    (lambda: checks.check_type([1], tuple, "result"), "result: expected a tuple, got list"),
    (lambda: checks.check_close(1.5, 1.0, "loss"), "loss: expected 1, got 1.5"),
    (lambda: checks.check_close(torch.ones(3), torch.zeros(3), "grad"), "largest difference 1"),
    (lambda: checks.check_close(torch.ones(3), torch.ones(4), "grad"), "grad: expected shape (4,), got (3,)"),
    (lambda: checks.check_close("1.0", 1.0, "loss"), "loss: expected a number, got str"),
    (lambda: checks.check_raises(ValueError, lambda: 1, "f()"), "f(): expected ValueError to be raised, got no error"),
    (lambda: checks.check_raises(ValueError, lambda: 1 / 0, "f()"), "got ZeroDivisionError"),
])
def test_failed_checks_say_what_was_expected_and_what_was_got(call, fragment):
    with pytest.raises(AssertionError) as info:
        call()
    assert fragment in str(info.value)


def test_passing_checks_stay_silent():
    checks.check_shape(torch.zeros(2, 3), (2, 3), "x")
    checks.check_dtype(torch.zeros(2), torch.float32, "x")
    checks.check_device(torch.zeros(2, device="meta"), "meta", "x")
    checks.check_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-8]), "x")
    checks.check_close(torch.tensor(0.5), 0.5, "x")
    checks.check_close(2.0, 2.0, "x")
    assert isinstance(checks.check_raises(KeyError, {}.__getitem__, "d[1]", 1), KeyError)


def test_check_device_accepts_cuda_for_cuda_index_zero():
    assert checks._device_matches(torch.device("cuda:0"), torch.device("cuda"))
    assert not checks._device_matches(torch.device("cuda:0"), torch.device("cuda:1"))
    assert not checks._device_matches(torch.device("cpu"), torch.device("cuda"))


class _Liar:
    """Says it is a tensor on any device: isinstance() believes `__class__`."""

    @property
    def __class__(self):
        return torch.Tensor

    device = torch.device("meta")
    shape = (2,)
    dtype = torch.float32


class _Mirror(torch.Tensor):
    """A tensor whose own methods and shape lie: zeros that claim whatever is checked."""

    shape = property(lambda self: (5, 1))

    def detach(self):
        return torch.ones(3)


def test_checks_ask_the_real_type_and_the_real_tensor():
    assert isinstance(_Liar(), torch.Tensor)     # what the checks must not be fooled by
    for check in (lambda: checks.check_type(_Liar(), torch.Tensor, "x"),
                  lambda: checks.check_device(_Liar(), "meta", "x"),
                  lambda: checks.check_shape(_Liar(), (2,), "x"),
                  lambda: checks.check_close(_Liar(), torch.ones(2), "x"),
                  lambda: checks.check_shape(torch.zeros(3).as_subclass(_Mirror), (5, 1), "x"),
                  lambda: checks.check_close(torch.zeros(3).as_subclass(_Mirror), torch.ones(3), "x")):
        with pytest.raises(AssertionError):
            check()
    checks.check_close(torch.ones(3).as_subclass(_Mirror), torch.ones(3), "x")    # honest values still pass
    checks.check_shape(torch.nn.Parameter(torch.zeros(2, 3)), (2, 3), "a parameter")


class _Agree(int):
    """An int whose == says yes to anything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


class _AgreeTuple(tuple):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = tuple.__hash__


class _Anything:
    def __eq__(self, other):
        return True


@pytest.mark.parametrize("value, expected", [
    (_Agree(4), 5), (_AgreeTuple((1,)), (3, 4)), (_Anything(), 5), (_Anything(), "cpu"), ((_Anything(), 4), (3, 4)),
    ([_Anything()], [1]), ({"a": _Anything()}, {"a": 1}), ((1, 2, 3), (1, 2)),
], ids=["int subclass", "tuple subclass", "own class", "own class vs str", "inside a tuple", "inside a list",
        "inside a dict", "longer tuple"])
def test_check_equal_lets_python_compare_not_the_value(value, expected):
    with pytest.raises(AssertionError):
        checks.check_equal(value, expected, "x")


@pytest.mark.parametrize("value, expected", [
    (1, 1.0), (True, True), (np.int64(3), 3), (np.float64(0.5), 0.5), (torch.tensor(3), 3), (torch.tensor(True), True),
    (torch.Size([3, 4]), (3, 4)), ([1, 2], [1, 2]), ({"a": 1, "b": (2, 3)}, {"b": (2, 3), "a": 1}), (None, None),
    (torch.float32, torch.float32), (torch.device("cpu"), torch.device("cpu")), ("cpu", "cpu"),
    ((3, (4, 5)), (3, (4, 5))),
])
def test_check_equal_accepts_equal_values_of_every_honest_kind(value, expected):
    checks.check_equal(value, expected, "x")
