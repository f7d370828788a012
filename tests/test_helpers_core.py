"""Unit tests of the helpers every notebook imports: device, seeding, data, checks, widgets."""

import contextlib
from unittest import mock

import numpy as np
import pytest
import torch

from helpers import checks, data, device, seeding, widgets


def _machine(cuda: bool, mps: bool):
    """torch.cuda and torch.backends.mps answer as a machine with (or without) CUDA and MPS would."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch("torch.cuda.is_available", lambda: cuda))
    stack.enter_context(mock.patch("torch.backends.mps.is_available", lambda: mps))
    return stack


@pytest.mark.parametrize("cuda, mps, expected", [(False, False, "cpu"), (True, False, "cuda"),
                                                 (False, True, "mps"), (True, True, "cuda")])
def test_default_device_picks_in_the_order_notebook_01_states(cuda, mps, expected):
    """Notebook 01 says the setup cell chose CUDA, else Apple's MPS, else the CPU: default_device asks in that order."""
    with _machine(cuda, mps):
        assert device.default_device() == torch.device(expected)


def test_default_device_without_torch_accelerator():
    """Older torch (before 2.6) has no torch.accelerator: default_device does not need it."""
    with mock.patch.object(torch, "accelerator", None, create=True), _machine(False, True):
        assert device.default_device().type == "mps"


def test_synchronize_on_cpu_waits_for_nothing():
    device.synchronize(torch.device("cpu"))
    device.synchronize("cpu")


def test_describe_device_on_cpu():
    assert device.describe_device(torch.device("cpu")) == "cpu"


def test_seed_everything_repeats_every_stream():
    import random

    import numpy as np

    g1 = seeding.seed_everything(3)
    first = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g1).item())
    g2 = seeding.seed_everything(3)
    second = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g2).item())
    assert first == second
    seeding.seed_everything(4)
    assert torch.rand(1).item() != first[2]


def test_make_regression_is_seeded_and_shaped():
    a, b = data.make_regression(20, num_features=3, seed=1), data.make_regression(20, num_features=3, seed=1)
    assert torch.equal(a.tensors[0], b.tensors[0]) and torch.equal(a.tensors[1], b.tensors[1])
    x, y = a[0]
    assert x.shape == (3,) and y.shape == (1,) and x.dtype == torch.float32
    assert not torch.equal(a.tensors[0], data.make_regression(20, num_features=3, seed=2).tensors[0])


def test_make_classification_labels_are_int64_classes():
    ds = data.make_classification(100, num_features=4, num_classes=5, seed=0)
    x, label = ds[0]
    assert x.shape == (4,) and label.dtype == torch.int64 and label.shape == ()
    assert set(ds.tensors[1].tolist()) <= set(range(5))


def test_make_classification_does_not_touch_the_global_rng():
    torch.manual_seed(0)
    expected = torch.rand(2)
    torch.manual_seed(0)
    data.make_classification(10)
    assert torch.equal(torch.rand(2), expected)


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


def test_broadcast_table_shows_alignment_and_refusal():
    table = widgets.broadcast_table((8, 1, 6, 1), (7, 1, 5))
    assert "(8, 7, 6, 5)" in table and "  -" in table
    assert "not broadcastable" in widgets.broadcast_table((2, 3), (3, 2))


def test_broadcast_explorer_updates_as_shapes_change():
    box = widgets.broadcast_explorer("3, 1", "1, 4")
    view = box.children[1]
    assert "(3, 4)" in view.value
    shape_b = box.children[0].children[1]
    shape_b.value = "5, 1, 4"
    assert "(5, 3, 4)" in view.value
    shape_b.value = "x"
    assert "comma-separated" in view.value


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


def test_load_digits_is_real_split_and_disjoint():
    from helpers.data import load_digits

    train, val, everything = load_digits("train"), load_digits("val"), load_digits("all")
    assert len(everything) == 1797 and len(train) + len(val) == 1797
    image, label = train[0]
    assert image.shape == (1, 8, 8) and image.dtype == torch.float32 and label.dtype == torch.int64
    assert 0.0 <= float(everything.tensors[0].min()) and float(everything.tensors[0].max()) == 1.0
    assert torch.equal(load_digits("val").tensors[1], val.tensors[1])  # the same split every time


@pytest.mark.slow
def test_load_digits_equals_scikit_learns_own_loader():
    from sklearn.datasets import load_digits as sklearn_digits

    from helpers.data import load_digits

    images, labels = load_digits("all").tensors
    reference = sklearn_digits()
    assert torch.equal(images, torch.tensor(reference.images, dtype=torch.float32).unsqueeze(1) / 16.0)
    assert torch.equal(labels, torch.tensor(reference.target, dtype=torch.int64))
