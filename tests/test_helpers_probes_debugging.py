"""helpers.probes_debugging: do the probes count hooks and record autograd as it really was?"""

import torch
from torch import nn

from helpers.probes_debugging import GradRecorder, forward_hooks_on, global_forward_hooks


def test_forward_hooks_on_counts_hooks_and_pre_hooks_on_every_module():
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
    assert forward_hooks_on(model) == 0
    handles = [model[0].register_forward_hook(lambda m, i, o: None),
               model[1][0].register_forward_pre_hook(lambda m, i: None),
               model.register_forward_hook(lambda m, i, o: None)]
    assert forward_hooks_on(model) == 3
    for handle in handles:
        handle.remove()
    assert forward_hooks_on(model) == 0


def test_global_forward_hooks_counts_module_wide_hooks():
    before = global_forward_hooks()
    handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    try:
        assert global_forward_hooks() == before + 1
    finally:
        handle.remove()
    assert global_forward_hooks() == before


def test_grad_recorder_records_whether_autograd_was_on_and_passes_the_output_through():
    probe = GradRecorder(nn.Linear(2, 1))
    out = probe(torch.ones(3, 2))
    with torch.no_grad():
        probe(torch.ones(3, 2))
    assert probe.seen == [True, False]
    assert out.shape == (3, 1) and out.requires_grad
    assert list(probe.parameters()) == list(probe.inner.parameters())
