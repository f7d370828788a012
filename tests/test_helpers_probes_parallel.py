"""Unit tests of helpers.probes_parallel: replicas, the reference step and the device checks."""

import pytest
import torch
from torch import nn

from helpers.probes_parallel import (
    check_replicas_match, check_stage_devices, forward_or_fail, replicas_of, step_on_whole_batch)


def test_replicas_are_independent_copies_with_their_own_optimizers():
    model = nn.Linear(3, 1)
    replicas, optimizers = replicas_of(model, 3, lr=0.1, momentum=0.9)
    assert len(replicas) == len(optimizers) == 3
    assert all(r is not model and torch.equal(r.weight, model.weight) for r in replicas)
    assert optimizers[1].param_groups[0]["params"][0] is replicas[1].weight
    assert optimizers[1].param_groups[0]["momentum"] == 0.9


def test_whole_batch_step_is_one_sgd_step_and_the_check_sees_a_difference():
    torch.manual_seed(0)
    model, x, y = nn.Linear(3, 1), torch.randn(8, 3), torch.randn(8, 1)
    (single,), (optimizer,) = replicas_of(model, 1, lr=0.1)
    expected_loss = nn.MSELoss()(model(x), y)
    expected_loss.backward()
    loss = step_on_whole_batch(single, optimizer, x, y, nn.MSELoss())
    assert loss == pytest.approx(expected_loss.item())
    assert torch.allclose(single.weight, model.weight - 0.1 * model.weight.grad)
    check_replicas_match([single], single, "itself")
    with pytest.raises(AssertionError, match="replica 0's weight after a step"):
        check_replicas_match([model], single, "after a step")


def test_stage_devices_and_a_missing_move():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    model[2].to("meta")
    layers = list(model)                 # what a test keeps before the call
    check_stage_devices(layers, 2, ("cpu", "meta"), "a split model")
    with pytest.raises(AssertionError, match="weight of layer 2 of a split model"):
        check_stage_devices(layers, 2, ("cpu", "cpu"), "a split model")
    with pytest.raises(AssertionError, match="the forward: expected it to run"):
        forward_or_fail(model, torch.randn(2, 4), "the forward")
    assert forward_or_fail(model[:2], torch.randn(2, 4), "the forward").shape == (2, 8)
    del model[:]                         # what the code under test does to its model cannot change what is checked
    with pytest.raises(AssertionError, match="weight of layer 2 of a split model"):
        check_stage_devices(layers, 2, ("cpu", "cpu"), "a split model")
