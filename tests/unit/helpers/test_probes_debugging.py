"""helpers.probes_debugging: do the probes count hooks and record autograd as it really was?"""

import copy

import pytest
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


def _rewrites(probe, name, value):
    """What code handed a probe might do to the record a verdict reads: each refused or changing only a copy."""
    getattr(probe, name).clear()
    getattr(probe, name)[:] = value
    del getattr(probe, name)[1:]
    with pytest.raises(AttributeError):
        setattr(probe, name, value)
    with pytest.raises(AttributeError):
        delattr(probe, name)
    probe.__dict__[name] = value                        # the instance dict does not shadow the record


def _swapped(probe, action):
    """`action()` with every attribute that might say where the probe's records go set to something new (a key, a
    whole new instance dict), then put back: the probe has no such attribute, so the notes are filed as ever."""
    kept = probe.__dict__
    probe.__dict__ = dict(kept)
    probe._record_key = object()
    object.__setattr__(probe, "_records", ())
    try:
        return action()
    finally:
        probe.__dict__ = kept


def test_code_handed_the_grad_recorder_cannot_rewrite_its_record():
    probe = GradRecorder(nn.Linear(2, 1))
    probe(torch.ones(3, 2))
    _rewrites(probe, "seen", [False])
    assert probe.seen == [True]


def test_code_handed_the_global_hook_watcher_cannot_rewrite_what_it_saw():
    """Issue 38: trace_shapes handed a SeesGlobalHooks could set model.seen = [] after a forward under a global hook."""
    from helpers.probes_debugging import SeesGlobalHooks, global_hooks_in_forward

    def forges(model, x):
        handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: None)   # wrong: a global hook
        try:
            _swapped(model, lambda: model(x))           # a key swapped around the forward: nothing filed elsewhere
        finally:
            handle.remove()
        _rewrites(model, "seen", [0])
        return "traced"

    before = global_forward_hooks()
    result, seen = global_hooks_in_forward(forges, SeesGlobalHooks(nn.Linear(2, 2)), torch.ones(1, 2))
    assert result == "traced" and seen == [before + 1]
    assert global_hooks_in_forward(lambda m, x: _swapped(m, lambda: m(x).shape), SeesGlobalHooks(nn.Linear(2, 2)),
                                   torch.ones(1, 2)) == ((1, 2), [before])
    assert global_hooks_in_forward(lambda m, x: m(x).shape, SeesGlobalHooks(nn.Linear(2, 2)), torch.ones(1, 2)) == \
        ((1, 2), [before])


def test_code_handed_the_call_counter_cannot_rewrite_how_often_it_ran():
    """Issue 38: trace_shapes handed a CountsCalls could set model.calls = 1 after running the model twice."""
    from helpers.probes_debugging import CountsCalls, forward_passes_during

    def forges(model, x):
        model(x)
        _swapped(model, lambda: model(x))               # wrong: twice, the second with a key swapped around it
        with pytest.raises(AttributeError):
            model.calls = 1
        _rewrites(model, "forwards", [(3, 2)])
        return model.calls

    assert forward_passes_during(forges, CountsCalls(), torch.ones(3, 2)) == (2, 2)
    assert forward_passes_during(lambda m, x: m(x).shape, CountsCalls(), torch.ones(3, 2)) == ((3, 2), 1)


def test_a_deep_copy_of_the_call_counter_counts_with_it():
    """Issue 38's held-out red team: trace_shapes' dry run on copy.deepcopy(model) ran the model twice, counted once."""
    from helpers.probes_debugging import CountsCalls, forward_passes_during

    def dry_run_on_a_copy(model, x):
        copy.deepcopy(model)(x)                         # wrong: a second forward pass, on a copy
        return model(x).shape

    assert forward_passes_during(dry_run_on_a_copy, CountsCalls(), torch.ones(3, 2)) == ((3, 2), 2)
    probe = CountsCalls()
    twin = copy.deepcopy(probe)
    twin(torch.ones(1, 2))
    assert probe.calls == twin.calls == 1 and probe.forwards == [(1, 2)]
    assert twin.layer is not probe.layer and torch.equal(twin.layer.weight, probe.layer.weight)


def test_a_deep_copy_of_the_global_hook_watcher_reports_what_it_saw():
    from helpers.probes_debugging import SeesGlobalHooks, global_hooks_in_forward

    def hooked_copy(model, x):
        handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: None)   # wrong: a global hook
        try:
            return copy.deepcopy(model)(x).shape        # run on a copy of the model
        finally:
            handle.remove()

    before = global_forward_hooks()
    assert global_hooks_in_forward(hooked_copy, SeesGlobalHooks(nn.Linear(2, 2)), torch.ones(1, 2)) == \
        ((1, 2), [before + 1])


def test_a_deep_copy_of_the_grad_recorder_records_with_it():
    probe = GradRecorder(nn.Linear(2, 1))
    copy.deepcopy(probe)(torch.ones(3, 2))               # autograd on, in a copy
    with torch.no_grad():
        copy.deepcopy(probe)(torch.ones(3, 2))
    assert probe.seen == [True, False]
