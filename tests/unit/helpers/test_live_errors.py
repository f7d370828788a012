"""helpers.live_errors: do cases run live with their tensors, skip what no longer fails, and fail a wrong classifier?"""

import warnings

import pytest
import torch
from torch import nn

from helpers.live_errors import (CUDA_CONV_CPU_BATCH, CUDA_INV_HALF, CUDA_LINEAR_CPU_BATCH, check_kinds, provoke,
                                 raises, used_by)
from helpers.pretend_cuda import on_pretend_gpu

_A, _B = torch.zeros(2, 3), torch.zeros(2, 3)
SHAPE = ("shape", "a (2, 3) @ (2, 3) product", lambda: _A @ _B, (_A, _B))
_META, _X = nn.Linear(3, 2).to("meta"), torch.zeros(4, 3)
DEVICE = ("device", "a meta layer on a CPU batch", lambda: _META(_X), used_by(_META, _X))
_Z = torch.zeros(2)
RUNS = ("dtype", "an addition that works", lambda: _Z + 1, (_Z,))


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


def test_used_by_is_the_inputs_then_the_parameters_and_buffers():
    norm = nn.BatchNorm1d(4)
    x = torch.zeros(3, 4)
    used = used_by(norm, x)
    assert used[0] is x and used[1] is norm.weight and used[2] is norm.bias
    assert any(t is norm.running_mean for t in used[3:]) and len(used) == 1 + 2 + 3   # running mean, var, count


def test_raises_raises_the_class_and_message_given():
    with pytest.raises(RuntimeError) as raised:
        raises(RuntimeError, CUDA_CONV_CPU_BATCH)()
    assert str(raised.value) == CUDA_CONV_CPU_BATCH and "device" not in CUDA_CONV_CPU_BATCH
    assert "cuda:0 and cpu" in CUDA_LINEAR_CPU_BATCH and CUDA_INV_HALF.endswith("Got Half")


@pytest.mark.slow
def test_check_kinds_passes_a_right_classifier_and_skips_what_runs():
    judged = []

    def right(error, tensors):
        judged.append(error)
        return "device" if len({t.device for t in tensors}) > 1 else "shape"

    assert check_kinds(right, [SHAPE, DEVICE, RUNS]) is None
    assert len(judged) == 2      # the operation that runs on this torch leaves nothing to classify


def test_check_kinds_fails_a_wrong_classifier_with_the_live_message_and_the_facts():
    with pytest.raises(AssertionError) as failure:
        check_kinds(lambda error, tensors: "shape", [SHAPE, DEVICE])
    message = str(failure.value)
    assert "a meta layer on a CPU batch" in message and "expected 'device'" in message
    assert "RuntimeError" in message and "(4, 3) float32 on cpu" in message and "(2, 3) float32 on meta" in message


def test_check_kinds_hands_the_classifier_the_exception_and_the_tensors():
    seen = []
    check_kinds(lambda error, tensors: seen.append((error, tensors)) or "shape", [SHAPE])
    assert len(seen) == 1 and isinstance(seen[0][0], RuntimeError)
    assert isinstance(seen[0][1], tuple) and seen[0][1][0] is _A and seen[0][1][1] is _B


def test_a_pretend_gpu_tensor_shows_its_device_in_a_failure():
    weight = on_pretend_gpu(torch.zeros(2, 3))
    with pytest.raises(AssertionError) as failure:
        check_kinds(lambda error, tensors: "dtype",
                    [("device", "a CUDA layer", raises(RuntimeError, CUDA_CONV_CPU_BATCH), (_X, weight))])
    assert "(2, 3) float32 on cuda:0" in str(failure.value)
