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
