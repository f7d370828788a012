"""The judge on a GPU host, simulated on a CPU: `torch.cuda` says a GPU is there, and a tensor moved to
`cuda` becomes a `helpers.pretend_cuda.LooksOnCUDA` (its `.device` says cuda:0, its numbers stay here). What
the kernel reports on a GPU (a tensor, a gradient, an argument's parameter on cuda:0, the default device)
must stay on the GPU in the judge, as it would have in the kernel (issue 38: `available` looked up
`torch.cuda.isavailable`, so nothing did)."""

import pytest
import torch
from torch import nn

from course.grading.kernel.protocol import TAG_ATTRS, TAG_MAPPING, TAG_TENSOR
from course.grading.verdicts import state
from course.grading.verdicts.standins import Decoder
from course.grading.verdicts.sync import apply_all
from helpers.pretend_cuda import LooksOnCUDA

_REAL_TO = torch.Tensor.to


def _pretend_to(self, *args, **kwargs):
    """`Tensor.to` on a host whose GPU is pretend: towards cuda, the same numbers as a `LooksOnCUDA`."""
    device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
    if device is not None and device.type == "cuda":
        moved = _REAL_TO(self, dtype=dtype) if dtype is not None else self
        return moved.as_subclass(LooksOnCUDA)
    return _REAL_TO(self, *args, **kwargs)


@pytest.fixture
def cuda_host(monkeypatch):
    """The judge's torch on a one-GPU machine (pretend)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.Tensor, "to", _pretend_to)
    before = torch.get_default_device()
    yield
    torch.set_default_device(None if before.type == "cpu" else before)


def _wire_tensor(values: torch.Tensor, device: str, grad=None, requires_grad=False, parameter=False):
    """A tensor as the answer server sends it (kernel/answer_server.py, `_Server.tensor`)."""
    return (TAG_TENSOR, values.clone(), tuple(values.shape), device, requires_grad, grad, parameter)


def test_the_host_knows_its_gpu(cuda_host):
    assert state.available(torch.device("cuda", 0)) is True
    assert state.available(torch.device("mps")) is False       # no such device here


def test_a_tensor_the_kernel_has_on_its_gpu_is_on_the_judges(cuda_host):
    got = Decoder(None, []).value(_wire_tensor(torch.arange(6.0).reshape(2, 3), "cuda:0"))
    assert got.device == torch.device("cuda", 0)
    assert torch.equal(got.as_subclass(torch.Tensor), torch.arange(6.0).reshape(2, 3))


def test_a_gpu_parameter_keeps_its_gradient_on_the_gpu(cuda_host):
    grad = _wire_tensor(torch.ones(3), "cuda:0")
    got = Decoder(None, []).value(_wire_tensor(torch.zeros(3), "cuda:0", grad=grad, requires_grad=True, parameter=True))
    assert isinstance(got, nn.Parameter) and got.requires_grad
    assert got.device.type == "cuda" and got.grad is not None and got.grad.device.type == "cuda"


def test_a_model_the_student_moved_to_the_gpu_is_on_the_gpu_in_the_test(cuda_host):
    """An argument's state after the call (verdicts/sync): the test's model was moved to cuda in the kernel."""
    model = nn.Linear(2, 1)
    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    states = [(TAG_ATTRS, [["_parameters", (TAG_MAPPING, [
        ["weight", _wire_tensor(weight, "cuda:0", requires_grad=True, parameter=True)],
        ["bias", _wire_tensor(bias, "cuda:0", requires_grad=True, parameter=True)]], "dict")]])]
    apply_all(None, [model], states)
    assert {p.device.type for p in model.parameters()} == {"cuda"}
    assert torch.equal(model.weight.detach().as_subclass(torch.Tensor), weight)


def test_the_kernels_default_device_on_the_gpu_is_the_judges(cuda_host):
    own = state.global_state()
    kernel = list(own)
    kernel[4] = "cuda:0"
    state.set_global_state(kernel)
    assert torch.get_default_device() == torch.device("cuda", 0)
    state.set_global_state(own)
    assert torch.get_default_device().type == "cpu"
