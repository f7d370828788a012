"""Unit tests of helpers.probes_memory: the probes notebook 03's tests read."""

import copy

import pytest
import torch
from torch import nn

from helpers.probes_memory import AutocastProbe, ScaleBy1024, check_parameters_close


def test_autocast_probe_records_the_autocast_state_of_each_forward():
    model = AutocastProbe()
    x = torch.randn(2, 4)
    model(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model(x).dtype == torch.bfloat16
    with torch.autocast("cuda", dtype=torch.float16, enabled=False):
        model(x)
    assert [enabled for enabled, _ in model.seen] == [False, True, False]
    assert model.seen[1] == (True, torch.bfloat16)


@pytest.mark.slow
def test_scale_by_1024_gives_the_unscaled_step_and_records_calls():
    torch.manual_seed(0)
    model, x = nn.Linear(3, 1), torch.randn(5, 3)
    reference = copy.deepcopy(model)
    plain, scaled = torch.optim.SGD(reference.parameters(), lr=0.1), torch.optim.SGD(model.parameters(), lr=0.1)
    reference(x).pow(2).mean().backward()
    plain.step()
    scaler = ScaleBy1024()
    loss = model(x).pow(2).mean()
    big = scaler.scale(loss)
    assert big.item() == pytest.approx(1024 * loss.item())
    big.backward()
    scaler.unscale_(scaled)
    scaler.step(scaled)          # does not divide a second time
    scaler.update()
    assert scaler.calls == ["scale", "unscale_", "step", "update"] and scaler.inside_autocast == []
    check_parameters_close(model, reference, "after a step through ScaleBy1024")


def test_check_parameters_close_fails_on_other_values_or_dtype():
    a = nn.Linear(2, 2)
    b = copy.deepcopy(a)
    check_parameters_close(a, b, "copies")
    with torch.no_grad():
        b.weight.add_(1.0)
    with pytest.raises(AssertionError, match="parameter weight"):
        check_parameters_close(a, b, "changed")
    with pytest.raises(AssertionError, match="dtype"):
        check_parameters_close(copy.deepcopy(a).to(torch.bfloat16), a, "halved")
    emptied = nn.Sequential(nn.Linear(2, 2))
    reference = copy.deepcopy(emptied)
    del emptied[:]                      # what code under test could do to the model it was given
    with pytest.raises(AssertionError, match="the names of the model's parameters emptied"):
        check_parameters_close(emptied, reference, "emptied")


def test_a_deep_copy_of_the_autocast_probe_records_into_the_original():
    import copy

    probe = AutocastProbe()
    copy.deepcopy(probe)(torch.randn(2, 4))
    assert probe.seen == [(False, torch.get_autocast_dtype("cpu"))]


def test_step_on_pretend_gpu_records_autocast_in_forward_and_backward():
    from helpers.probes_memory import step_on_pretend_gpu

    def step(model, x, y, loss_fn, use_autocast):
        torch.cuda.reset_peak_memory_stats(x.device)
        before = torch.cuda.memory_allocated(x.device)
        with torch.autocast(x.device.type, dtype=torch.float16, enabled=use_autocast):
            loss = loss_fn(model(x), y)
            if use_autocast:
                loss.backward()          # inside the block: recorded
        if not use_autocast:
            loss.backward()
        return torch.cuda.max_memory_allocated(x.device) - before

    fp32, record = step_on_pretend_gpu(step, False, held=5_000, old_peak=10**9)
    assert record.seen == [(False, torch.float16)] and record.backward_autocast == [False]
    assert fp32 == step_on_pretend_gpu(step, False)[0] > 0
    amp, record = step_on_pretend_gpu(step, True)
    assert record.seen == [(True, torch.float16)] and record.backward_autocast == [True]
    assert 0.4 < amp / fp32 < 0.8


def test_a_step_probes_record_is_not_the_step_s_to_write():
    """Issue 38's fourth red team: a step that ran backward inside autocast rewrote model.backward_autocast."""
    from helpers.probes_memory import StepProbe, step_on_pretend_gpu

    def forges(model, x, y, loss_fn, use_autocast):
        with torch.autocast(x.device.type, dtype=torch.float16, enabled=use_autocast):
            loss_fn(model(x), y).backward()          # wrong: inside the block
        model.backward_autocast.clear()              # a copy: the record stays
        model.__dict__["backward_autocast"] = [False]
        with pytest.raises(AttributeError):
            model.backward_autocast = [False]
        return 0

    assert step_on_pretend_gpu(forges, True)[1].backward_autocast == [True]
    assert isinstance(StepProbe.__dict__["seen"], type(StepProbe.__dict__["backward_autocast"]))


def test_code_handed_the_autocast_probe_cannot_rewrite_what_it_saw():
    """Issue 38: the record a verdict reads is kept apart from the model the code under test is handed."""
    from helpers.probes_memory import autocast_in_forward

    def forges(model, x):
        kept = model.__dict__
        model._record_key = object()                      # no key to swap: records are filed under the probe itself
        model.__dict__ = dict(kept)
        object.__setattr__(model, "_records", ("seen",))
        model(x)                                          # wrong: no autocast
        model.__dict__ = kept                             # restored, as if nothing happened
        model.seen.clear()                                # a copy: the record stays
        model.seen[:] = [(True, torch.bfloat16)]
        with pytest.raises(AttributeError):
            model.seen = [(True, torch.bfloat16)]
        model.__dict__["seen"] = [(True, torch.bfloat16)]
        with pytest.raises(AttributeError):
            del model.seen
        return "done"

    result, seen = autocast_in_forward(forges, AutocastProbe(), torch.randn(2, 4))
    assert result == "done" and seen == [(False, torch.get_autocast_dtype("cpu"))]

    def right(model, x):
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            return model(x).dtype

    assert autocast_in_forward(right, AutocastProbe(), torch.randn(2, 4)) == (torch.bfloat16, [(True, torch.bfloat16)])
    assert autocast_in_forward(lambda m, x: torch.cuda.is_available(), AutocastProbe(), torch.randn(2, 4),
                               cuda_machine=True) == (True, [])


def test_code_handed_the_scaler_cannot_rewrite_what_it_saw():
    """Issue 38: a step inside autocast rewrote scaler.inside_autocast and scaler.calls, plain lists on the scaler."""
    from helpers.probes_memory import through_scaler

    def forges(model, x, y, loss_fn, optimizer, scaler):
        optimizer.zero_grad()
        kept = scaler.__dict__
        object.__setattr__(scaler, "_record_key", object())   # a key set around the wrong step files nothing elsewhere
        scaler.__dict__ = {"_unscaled": False}
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()                 # wrong: all of it inside the block
            scaler.step(optimizer)
            scaler.update()
        scaler.__dict__ = kept
        del scaler._record_key
        scaler.inside_autocast.clear()                    # copies: the records stay
        del scaler.calls[1:]
        for name in ("calls", "inside_autocast"):
            with pytest.raises(AttributeError):
                setattr(scaler, name, [])
        scaler.__dict__["inside_autocast"] = []
        return loss.item()

    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    loss, record = through_scaler(forges, model, torch.randn(4, 3), torch.tensor([0, 1, 1, 0]), nn.CrossEntropyLoss(),
                                  torch.optim.SGD(model.parameters(), lr=0.1))
    assert isinstance(loss, float)
    assert record.calls == ["scale", "step", "update"] and record.inside_autocast == ["backward", "step", "update"]
    with pytest.raises(AttributeError):
        record.calls = []                                 # a frozen record
