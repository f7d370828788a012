"""helpers.device: which device a notebook uses, and what it says of it."""

import contextlib
from unittest import mock

import pytest
import torch

from helpers import device


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
