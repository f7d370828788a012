"""helpers.live_errors: do cases run live, skip what no longer fails, and fail a wrong classifier?"""

import warnings

import pytest
import torch
from torch import nn

from helpers.live_errors import check_kinds, provoke

SHAPE = ("shape", "a (2, 3) @ (2, 3) product", lambda: torch.zeros(2, 3) @ torch.zeros(2, 3))
DEVICE = ("device", "a meta layer on a CPU batch", lambda: nn.Linear(3, 2).to("meta")(torch.zeros(4, 3)))
RUNS = ("dtype", "an addition that works", lambda: torch.zeros(2) + 1)


def test_provoke_returns_the_live_exception_or_none():
    error = provoke(SHAPE[2])
    assert isinstance(error, RuntimeError) and "2x3" in str(error)
    assert provoke(RUNS[2]) is None


def test_provoke_silences_warnings_and_keeps_any_exception_class():
    def warns_then_fails():
        warnings.warn("noise", UserWarning, stacklevel=1)
        return {}["missing"]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(provoke(warns_then_fails), KeyError)


@pytest.mark.slow
def test_check_kinds_passes_a_right_classifier_and_skips_what_runs():
    judged = []

    def right(error):
        judged.append(error)
        return "device" if "device" in str(error) else "shape"

    assert check_kinds(right, [SHAPE, DEVICE, RUNS]) is None
    assert len(judged) == 2      # the operation that runs on this torch leaves nothing to classify


def test_check_kinds_fails_a_wrong_classifier_with_the_live_message():
    with pytest.raises(AssertionError) as failure:
        check_kinds(lambda error: "shape", [SHAPE, DEVICE])
    message = str(failure.value)
    assert "a meta layer on a CPU batch" in message and "expected 'device'" in message
    assert "RuntimeError" in message and "meta" in message


def test_check_kinds_hands_the_classifier_the_exception_itself():
    seen = []
    check_kinds(lambda error: seen.append(error) or "shape", [SHAPE])
    assert len(seen) == 1 and isinstance(seen[0], RuntimeError)
