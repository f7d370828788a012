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


def _average(model):
    import torch.distributed as dist

    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()


def _keeps_own_gradient(model):
    pass


def _reference(model, x, y):
    import copy

    single = copy.deepcopy(model)
    nn.MSELoss()(single(x), y).backward()
    return ([None if p.grad is None else p.grad.clone() for p in single.parameters()],
            [p.detach().clone() for p in single.parameters()])


def test_gradients_in_ranks_gives_each_rank_its_own_shard_and_the_checks_judge_them():
    from helpers.checks import check_close
    from helpers.probes_parallel import check_rank_gradients, check_ranks_finished, gradients_in_ranks

    torch.manual_seed(0)
    model, x, y = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)), torch.randn(8, 3), torch.randn(8, 1)
    model[0].bias.requires_grad_(False)
    grads, params = _reference(model, x, y)
    shards = [(x[:4], y[:4]), (x[4:], y[4:])]
    ranks = gradients_in_ranks(_average, model, shards, nn.MSELoss())
    check_ranks_finished(ranks, "the average")
    check_rank_gradients(ranks, grads, params, "the average")
    assert ranks[0].value["grads"][1] is None                    # the frozen bias
    assert model[0].weight.grad is None                          # the ranks worked on their own copies

    own = gradients_in_ranks(_keeps_own_gradient, model, shards, nn.MSELoss())
    check_ranks_finished(own, "nothing")
    shard_grads, _ = _reference(model, *shards[1])
    check_close(own[1].value["grads"][0], shard_grads[0], "rank 1 keeps the gradient of its own shard")
    with pytest.raises(AssertionError, match=r"the \.grad of parameter 0 on rank 0 after nothing"):
        check_rank_gradients(own, grads, params, "nothing")


def test_check_ranks_finished_names_the_ranks_that_raised_or_never_returned():
    from helpers.probes_parallel import check_ranks_finished
    from helpers.process_group import RankResult

    check_ranks_finished([RankResult(0, value=1, finished=True)], "f")
    with pytest.raises(AssertionError, match=r"f raised in 1 of 2 ranks: .* rank 1: ValueError: boom"):
        check_ranks_finished([RankResult(0, value=1, finished=True),
                              RankResult(1, error="ValueError: boom", finished=True)], "f")
    with pytest.raises(AssertionError, match=r"f never returned in rank\(s\) \[0\] \(stopped after 20 s\), "
                                             r"while rank\(s\) \[1\] finished"):
        check_ranks_finished([RankResult(0), RankResult(1, value=1, finished=True)], "f")


def test_check_rank_gradients_refuses_changed_parameters_and_a_gradient_where_none_belongs():
    from helpers.probes_parallel import check_rank_gradients
    from helpers.process_group import RankResult

    grads, params = [torch.ones(2), None], [torch.zeros(2), torch.zeros(1)]
    ok = RankResult(0, value={"grads": [torch.ones(2), None], "params": [torch.zeros(2), torch.zeros(1)]},
                    finished=True)
    check_rank_gradients([ok], grads, params, "f")
    moved = RankResult(0, value={"grads": [torch.ones(2), None], "params": [torch.zeros(2), torch.ones(1)]},
                       finished=True)
    with pytest.raises(AssertionError, match="parameter 1 on rank 0 after f"):
        check_rank_gradients([moved], grads, params, "f")
    extra = RankResult(0, value={"grads": [torch.ones(2), torch.ones(1)], "params": params}, finished=True)
    with pytest.raises(AssertionError, match="expected None, got a tensor"):
        check_rank_gradients([extra], grads, params, "f")


def _not_written(model):
    raise NotImplementedError()


def test_gradients_in_ranks_says_not_written_yet_as_the_notebook_does():
    from helpers.probes_parallel import gradients_in_ranks

    model, x, y = nn.Linear(3, 1), torch.randn(4, 3), torch.randn(4, 1)
    with pytest.raises(NotImplementedError, match="_not_written raised NotImplementedError in every rank"):
        gradients_in_ranks(_not_written, model, [(x[:2], y[:2]), (x[2:], y[2:])], nn.MSELoss())
