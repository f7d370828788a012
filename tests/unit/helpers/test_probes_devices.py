"""helpers.probes_devices: the probes record where their weights and inputs were."""

import pytest
import torch

from helpers.probes_devices import DeviceProbe, LossProbe


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


def test_without_broadcast_shapes_refuses_torch_broadcast_shapes_only_inside():
    from helpers.probes_devices import without_broadcast_shapes

    def calls_torch(a, b):
        return tuple(torch.broadcast_shapes(a, b))

    def by_hand(a, b):
        return (max(a[0], b[0]),)

    from torch import broadcast_shapes as taken_earlier      # issue 38: an alias went around the patched name

    with pytest.raises(AssertionError, match="the task forbids it"):
        without_broadcast_shapes(calls_torch, (3,), (1,))
    with pytest.raises(AssertionError, match="the task forbids it"):
        without_broadcast_shapes(lambda a, b: tuple(taken_earlier(a, b)), (3,), (1,))
    assert without_broadcast_shapes(by_hand, (3,), (1,)) == (3,)
    assert calls_torch((3,), (1,)) == (3,)                     # as it was, outside


def test_a_deep_copy_of_a_probe_records_into_the_original_and_copies_everything_else():
    import copy
    import pickle

    from helpers.probes_devices import GradModeProbe

    probe = GradModeProbe()
    twin = copy.deepcopy(probe).eval()
    with torch.no_grad():
        twin(torch.randn(2, 4))
    assert probe.seen == [False] and twin.seen == probe.seen
    assert probe.training and not twin.training
    assert twin.linear.weight is not probe.linear.weight and torch.equal(twin.linear.weight, probe.linear.weight)
    loss_fn = LossProbe()
    copy.deepcopy(loss_fn)(torch.zeros(1), torch.zeros(1))
    assert loss_fn.seen == [{"outputs": "cpu", "targets": "cpu"}]
    carried = pickle.loads(pickle.dumps(probe))    # how course grade carries it to the notebook: its own records,
    carried(torch.randn(1, 4))                     # kept where they are noted (helpers/records.py), none carried
    assert probe.seen == [False] and carried.seen == [True]


def _forges(probe, record, *, call):
    """What code handed a probe might do to the record a verdict reads: each refused or changing only a copy. `call()`
    runs with every attribute that might say where the records go set anew (a key, the whole instance dict), and
    those put back after: records are filed under the probe itself."""
    kept = probe.__dict__
    probe.__dict__ = dict(kept)
    probe._record_key = object()
    object.__setattr__(probe, "_record_key", object())
    try:
        call()
    finally:
        probe.__dict__ = kept
    probe.seen.clear()                                  # a copy: the record stays
    probe.seen[:] = [record]
    del probe.seen[1:]
    with pytest.raises(AttributeError):
        probe.seen = [record]
    with pytest.raises(AttributeError):
        del probe.seen
    probe.__dict__["seen"] = [record]                   # the instance dict does not shadow the record


def test_code_handed_a_device_or_loss_probe_cannot_rewrite_where_it_ran():
    """Issue 38: a probe's record was a plain list on the object handed to the code under test."""
    probe = DeviceProbe(3, 2)
    _forges(probe, {"weight": "meta", "inputs": "meta"}, call=lambda: probe(torch.randn(4, 3)))
    assert probe.seen == [{"weight": "cpu", "inputs": "cpu"}] == probe.places
    loss_fn = LossProbe()
    _forges(loss_fn, {"outputs": "meta", "targets": "meta"}, call=lambda: loss_fn(torch.zeros(1), torch.zeros(1)))
    assert loss_fn.seen == [{"outputs": "cpu", "targets": "cpu"}] == loss_fn.places


def test_code_handed_the_grad_mode_probe_cannot_rewrite_whether_autograd_recorded():
    """Issue 38: predict handed a GradModeProbe could set model.seen = [False] after a forward that recorded."""
    from helpers.probes_devices import GradModeProbe, grad_mode_in_forward

    def forges(model, x):
        out = []
        _forges(model, False, call=lambda: out.append(model(x).detach()))   # wrong: detached afterwards
        model(x)
        return out[0]

    out, seen = grad_mode_in_forward(forges, GradModeProbe(), torch.randn(3, 4))
    assert seen == [True, True] and out.shape == (3, 2)

    def right(model, x):
        with torch.no_grad():
            return copy.deepcopy(model)(x)              # a deep copy records into the probe handed over

    import copy

    assert grad_mode_in_forward(right, GradModeProbe(), torch.randn(3, 4))[1] == [False]
