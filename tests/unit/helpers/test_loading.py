"""Unit tests of helpers.loading: a dataset whose items take time, read the same by workers."""

import time

import torch
from torch.utils.data import DataLoader

from helpers.loading import SlowDataset


def test_items_are_repeatable_and_take_their_delay():
    data = SlowDataset(n=8, delay=0.01)
    start = time.perf_counter()
    x, y = data[3]
    assert time.perf_counter() - start >= 0.01
    assert x.shape == (1, 8, 8) and x.dtype == torch.float32 and y.dtype == torch.int64
    assert torch.equal(data[3][0], x) and len(data) == 8


def test_two_workers_give_the_same_batches_in_the_same_order():
    data = SlowDataset(n=16, delay=0.0)
    plain = [x for x, _ in DataLoader(data, batch_size=4)]
    parallel = [x for x, _ in DataLoader(data, batch_size=4, num_workers=2)]
    assert all(torch.equal(a, b) for a, b in zip(plain, parallel)) and len(parallel) == 4
