"""helpers.probes_devices: the pretend machine answers like the real one would, and the probes record devices."""

import pytest
import torch

from helpers.probes_devices import DeviceProbe, LossProbe, device_on, pretend_machine


def _by_hand():
    """Availability asked every way a student might, in the order CUDA, MPS, CPU."""
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        return torch.device("cuda", torch.cuda.current_device())
    if torch.backends.mps.is_available() and torch.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _by_accelerator():
    return torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")


@pytest.mark.parametrize("cuda, mps, expected", [(False, False, "cpu"), (True, False, "cuda"),
                                                 (False, True, "mps"), (True, True, "cuda")])
def test_every_way_of_asking_agrees(cuda, mps, expected):
    assert device_on(_by_hand, cuda=cuda, mps=mps).type == expected
    if hasattr(torch, "accelerator"):
        assert device_on(_by_accelerator, cuda=cuda, mps=mps).type == expected
        with pretend_machine(cuda=cuda, mps=mps):
            assert torch.accelerator.device_count() == int(expected != "cpu")


def test_pretend_machine_ends_with_its_block():
    real = (torch.cuda.is_available(), torch.backends.mps.is_available())
    with pretend_machine(cuda=not real[0], mps=not real[1]):
        assert torch.cuda.is_available() is (not real[0])
    assert (torch.cuda.is_available(), torch.backends.mps.is_available()) == real


def test_without_an_accelerator_current_accelerator_is_none():
    if not hasattr(torch, "accelerator"):
        pytest.skip("this torch has no torch.accelerator")
    with pretend_machine(cuda=False, mps=False):
        assert torch.accelerator.current_accelerator() is None
        assert torch.accelerator.current_accelerator(check_available=True) is None


def test_device_probe_records_weight_and_input_devices():
    probe = DeviceProbe(3, 2)
    assert probe(torch.randn(4, 3)).shape == (4, 2)
    probe.to("meta")
    out = probe(torch.randn(5, 3))
    assert out.device.type == "cpu" and out.shape == (5, 2)
    probe(torch.randn(5, 3, device="meta"))
    probe(torch.randn(2, 3, device="meta"))
    assert probe.seen == [{"weight": "cpu", "inputs": "cpu"}, {"weight": "meta", "inputs": "cpu"},
                          {"weight": "meta", "inputs": "meta"}, {"weight": "meta", "inputs": "meta"}]
    assert probe.places == probe.seen[:3]


def test_loss_probe_records_and_returns_a_cpu_number():
    loss_fn = LossProbe(0.5)
    loss = loss_fn(torch.zeros(2, 1, device="meta"), torch.zeros(2, 1))
    assert loss.device.type == "cpu" and loss.item() == 0.5
    loss_fn(torch.zeros(2, 1, device="meta"), torch.zeros(2, 1))
    assert loss_fn.seen == [{"outputs": "meta", "targets": "cpu"}] * 2
    assert loss_fn.places == [{"outputs": "meta", "targets": "cpu"}]
