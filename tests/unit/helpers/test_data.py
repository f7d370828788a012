"""helpers.data: the datasets the notebooks make and load."""

import pytest
import torch

from helpers import data


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
