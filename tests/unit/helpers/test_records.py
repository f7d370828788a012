"""helpers.records: a probe's records are filed under the probe itself, with nothing on it that says where."""

import copy
import gc
import pickle

import pytest

from helpers import records
from helpers.records import Record, SharesRecords, note, recorded, share


class Probe(SharesRecords):
    seen = Record()

    def __init__(self):
        self.weight = [1.0]

    def act(self, what):
        note(self, "seen", what)


def _swaps():
    """Ways code handed a probe might try to change where its next notes are filed, each undone by the returned
    function: a key attribute set and put back, the whole instance dict replaced, object.__setattr__."""

    def set_and_restore(probe):
        had = probe.__dict__.get("_record_key", None)
        probe._record_key = object()
        return lambda: probe.__dict__.update(_record_key=had)

    def replace_dict(probe):
        kept = probe.__dict__
        probe.__dict__ = {"weight": [2.0], "_record_key": object(), "seen": []}
        return lambda: setattr(probe, "__dict__", kept)

    def object_setattr(probe):
        object.__setattr__(probe, "_record_key", object())
        object.__setattr__(probe, "_records", ("seen",))
        return lambda: (object.__delattr__(probe, "_record_key"), object.__delattr__(probe, "_records"))

    return [set_and_restore, replace_dict, object_setattr]


@pytest.mark.parametrize("swap", _swaps(), ids=lambda s: s.__name__)
def test_a_swap_around_a_forbidden_action_files_it_where_the_verdict_reads(swap):
    """The key-swap gap: a fresh key set before a forbidden action and restored after filed its notes elsewhere."""
    probe = Probe()
    probe.act("allowed")
    undo = swap(probe)
    probe.act("forbidden")
    undo()
    probe.act("allowed again")
    assert recorded(probe, "seen") == probe.seen == ["allowed", "forbidden", "allowed again"]


def test_a_record_is_read_as_a_copy_and_cannot_be_set_deleted_or_noted_through_the_probe():
    probe = Probe()
    probe.act(1)
    probe.seen.clear()
    probe.__dict__["seen"] = []
    with pytest.raises(AttributeError):
        probe.seen = []
    with pytest.raises(AttributeError):
        del probe.seen
    assert probe.seen == [1]
    assert not hasattr(type(probe).seen, "note")       # noting takes this module's function, not the probe's class


def test_a_deep_copy_shares_the_records_and_copies_the_rest():
    probe = Probe()
    twin = copy.deepcopy(probe)
    twin.act("by the copy")
    probe.act("by the original")
    assert probe.seen == twin.seen == ["by the copy", "by the original"]
    assert twin.weight == probe.weight and twin.weight is not probe.weight
    copy.deepcopy(twin).act("by a copy of the copy")
    assert probe.seen[-1] == "by a copy of the copy"


def test_a_pickled_probe_carries_no_records():
    probe = Probe()
    probe.act("here")
    carried = pickle.loads(pickle.dumps(probe))
    assert carried.seen == []
    carried.act("there")
    assert probe.seen == ["here"] and carried.seen == ["there"]


def test_sharing_never_re_files_a_probe_that_keeps_records():
    probe, other = Probe(), Probe()
    probe.act("mine")
    share(probe, other)
    probe.act("still mine")
    assert probe.seen == ["mine", "still mine"] and other.seen == []
    loss = Probe()
    share(loss, probe)                                 # a loss function made for the probe: noted with it
    loss.act("by the loss")
    assert probe.seen[-1] == "by the loss"


def test_a_probe_s_records_go_with_it_and_a_new_object_at_its_address_starts_empty():
    probe = Probe()
    probe.act("x")
    ident = id(probe)
    assert ident in records._KEPT
    del probe
    gc.collect()
    assert ident not in records._KEPT
    assert all(Probe().seen == [] for _ in range(50))


# Issue 38's fifth red team (/tmp/redteam38): wrong answers kept full marks by changing what a probe notes, not where
# it files it. Each attack's working lines, run through the helper its test uses (`asks_notebook`: in the kernel it
# runs exactly so), now fail the test or are noted as the mistake they hide.

def test_a_probe_s_class_cannot_be_changed_and_its_methods_cannot_be_hidden():
    probe = Probe()
    with pytest.raises(AttributeError, match="cannot be changed"):
        type(probe).act = lambda self, what: None            # the red team's `type(loss_fn).__call__ = ...`
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del type(probe).act
    with pytest.raises(AttributeError, match="cannot be replaced"):
        probe.act = lambda what: None                         # `scaler._note_autocast = lambda what: None`
    with pytest.raises(AttributeError, match="cannot be replaced"):
        probe.__class__ = type("Other", (SharesRecords,), {})
    probe.weight = [3.0]                                      # its data stays the code's to change
    probe.act("seen")
    assert probe.seen == ["seen"] and records.changed([probe]) == []


def test_what_is_changed_past_the_refusals_fails_the_probe_s_test():
    from helpers.notebook_state import asks_notebook

    @asks_notebook
    def during(fn, probe):
        fn(probe)
        return probe.seen

    def shadow(probe):
        object.__setattr__(probe, "act", lambda what: None)
        probe.act("wrong")

    with pytest.raises(records.ProbeChanged, match="act of a Probe"):
        during(shadow, Probe())

    def patch_class(probe):
        type.__setattr__(type(probe), "act", lambda self, what: None)

    try:
        with pytest.raises(records.ProbeChanged, match="Probe.act"):
            during(patch_class, Probe())
        with pytest.raises(records.ProbeChanged, match="Probe.act"):     # and every later test of that kernel
            during(lambda probe: None, Probe())
    finally:
        type.__setattr__(Probe, "act", records._AS_MADE[Probe]["act"])
    assert during(lambda probe: probe.act("right"), Probe()) == ["right"]


def test_a_replaced_torch_function_changes_nothing_a_probe_notes():
    import torch

    from helpers.probes_devices import GradModeProbe, grad_mode_in_forward

    def detached(model, x):                                   # the red team's a01_detach: no torch.no_grad()
        real = torch.is_grad_enabled
        torch.is_grad_enabled = lambda: False
        try:
            return model(x).detach()
        finally:
            torch.is_grad_enabled = real

    _, seen = grad_mode_in_forward(detached, GradModeProbe(), torch.randn(2, 4))
    assert seen == [True]


def test_graph_building_is_counted_with_torch_function_modes_switched_off():
    import torch
    from torch import nn

    from helpers.probes_training import graph_ops_during

    def hidden(model, x):                                     # the red team's a02_nograd
        with torch._C.DisableTorchFunction():
            return model(x).argmax(1)

    assert graph_ops_during(hidden, nn.Linear(3, 2), torch.randn(4, 3)) > 0


def test_a_scaler_noted_by_its_own_class_whatever_its_instance_holds_for_a_while():
    import torch
    from torch import nn

    from helpers.probes_memory import through_scaler

    def inside(model, x, y, loss_fn, optimizer, scaler):      # the red team's a03_amp_bwd, past the refusal
        object.__setattr__(scaler, "_note_autocast", lambda what: None)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            scaler.scale(loss_fn(model(x), y)).backward()
            scaler.step(optimizer)
            scaler.update()
        object.__delattr__(scaler, "_note_autocast")

    model = nn.Linear(4, 3)
    _, seen = through_scaler(inside, model, torch.randn(8, 4), torch.randint(0, 3, (8,)), nn.CrossEntropyLoss(),
                             torch.optim.SGD(model.parameters(), lr=0.1))
    assert seen.inside_autocast == ["backward", "step", "update"]


def test_global_hooks_are_counted_in_a_registry_that_hides_its_size():
    import torch
    from torch import nn
    from torch.nn.modules import module as registry

    from helpers.probes_debugging import SeesGlobalHooks, global_hooks_in_forward

    class Unseen(dict):                                       # the red team's a06_global
        def __len__(self):
            return 0

        def __bool__(self):
            return dict.__len__(self) > 0

    def traced(model, x):
        real = registry._global_forward_hooks
        registry._global_forward_hooks = Unseen()
        handle = registry.register_module_forward_hook(lambda module, inputs, output: None)
        try:
            return model(x)
        finally:
            handle.remove()
            registry._global_forward_hooks = real

    _, seen = global_hooks_in_forward(traced, SeesGlobalHooks(nn.Linear(2, 2)), torch.randn(1, 2))
    assert seen == [1]


def test_numpy_s_broadcast_shapes_is_refused_as_torch_s_is():
    import numpy

    from helpers.probes_devices import without_broadcast_shapes

    with pytest.raises(AssertionError, match="forbids"):
        without_broadcast_shapes(lambda a, b: tuple(numpy.broadcast_shapes(a, b)), (2, 1), (1, 3))
    assert without_broadcast_shapes(lambda a, b: (2, 3), (2, 1), (1, 3)) == (2, 3)
