"""Unit tests of helpers.resume: the tiny run is seeded, and its resume is exact only with every piece of state."""

import pytest
import torch

from helpers.resume import largest_difference, tiny_run, train_one_epoch, train_until, trained_run

pytestmark = pytest.mark.slow      # each test trains the tiny run for epochs (seconds on two busy cores)


def _train(run, epochs):
    return [train_one_epoch(run) for _ in range(epochs)]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_same_seed_same_run(optimizer):
    a, b = tiny_run(0, optimizer), None
    losses_a = _train(a, 3)
    b = tiny_run(0, optimizer)
    assert _train(b, 3) == losses_a
    assert largest_difference(a.model.state_dict(), b.model.state_dict()) == 0.0


def test_the_run_uses_the_global_generator_and_the_schedule():
    run = tiny_run(0)
    torch.manual_seed(123)                       # a different global stream: other shuffles and dropout masks
    other = tiny_run(0)
    _train(run, 1)
    torch.manual_seed(123)
    _train(other, 1)
    assert largest_difference(run.model.state_dict(), other.model.state_dict()) > 1e-3
    _train(run, 1)
    assert run.optimizer.param_groups[0]["lr"] == pytest.approx(0.05)    # halved after 2 epochs


def _resume(leave_out=None):
    first = tiny_run(0)
    _train(first, 3)
    saved = {"model": first.model.state_dict(), "optimizer": first.optimizer.state_dict(),
             "scheduler": first.scheduler.state_dict(), "rng": torch.get_rng_state()}
    resumed = tiny_run(0)
    resumed.model.load_state_dict(saved["model"])
    for key, obj in [("optimizer", resumed.optimizer), ("scheduler", resumed.scheduler)]:
        if key != leave_out:
            obj.load_state_dict(saved[key])
    if leave_out != "rng":
        torch.set_rng_state(saved["rng"])
    _train(resumed, 2)
    return resumed.model.state_dict()


def test_resume_is_exact_with_everything_and_drifts_without_any_piece():
    full = tiny_run(0)
    _train(full, 5)
    assert largest_difference(_resume(), full.model.state_dict()) == 0.0
    for piece in ["optimizer", "scheduler", "rng"]:
        assert largest_difference(_resume(piece), full.model.state_dict()) > 1e-3, piece


def test_largest_difference_refuses_different_keys():
    with pytest.raises(ValueError):
        largest_difference({"a": torch.zeros(1)}, {"b": torch.zeros(1)})


def test_trained_run_is_tiny_run_trained_epoch_by_epoch():
    by_hand = tiny_run(1, "adam")
    _train(by_hand, 3)
    assert largest_difference(trained_run(1, 3, "adam").model.state_dict(), by_hand.model.state_dict()) == 0.0


def test_train_until_trains_the_epochs_of_the_range():
    run = trained_run(0, 2)
    assert train_until(run, 2, 5) is run
    assert run.scheduler.last_epoch == 5
    assert train_until(run, 5, 5).scheduler.last_epoch == 5       # an empty range trains nothing
