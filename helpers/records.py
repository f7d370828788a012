"""Records that a deep copy of a probe shares: a function may use a copy of the model it was given.

`predict` or `accuracy` written as `copy.deepcopy(model).eval()` is correct (the caller's model and its
modes are never touched), so what the copy does must reach the probe the test holds. A probe class lists
its record lists in `_records`; a deep copy of the probe copies everything else as usual and shares those
lists, so a forward pass of the copy is recorded where the test reads it. Pickling (which carries a
probe to the notebook's process under `course grade`) is not affected.

A record that decides a verdict about the code the probe is handed to is kept here instead, not on the probe
(`Record`): that code can read it, never set or change it, where a list on the probe could be rewritten
(`model.backward_autocast[:] = [False]`: issue 38's fourth red team).
"""

import copy
import weakref
from types import SimpleNamespace


class SharesRecords:
    """Mixed into a probe's class: `copy.deepcopy` shares the lists named in `_records` with the original."""

    _records: tuple = ()

    def __deepcopy__(self, memo):
        for name in self._records:
            records = self.__dict__[name]
            memo[id(records)] = records         # deepcopy gives back the same list
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        state = copy.deepcopy(self.__dict__, memo)
        if hasattr(type(twin), "__setstate__"):
            twin.__setstate__(state)            # nn.Module's, as a default deepcopy would call
        else:
            twin.__dict__.update(state)
        return twin


class RecordKey:
    """What a probe's `Record`s are filed under: one per probe, shared by its deep copies (list "_record_key" in
    the class's `_records`)."""


# The records themselves, per key: under `course grade` this module is the kernel's sealed copy
# (course/grading/kernel/answer_server.py), which the notebook's own `import helpers.records` does not reach.
_KEPT: "weakref.WeakKeyDictionary[RecordKey, dict]" = weakref.WeakKeyDictionary()


class Record:
    """A probe's record, kept in this module: `probe.name` reads a copy (a list), which code given the probe can
    change without changing the record, and setting `probe.name` is refused; `Probe.name.note(probe, value)`
    adds to it. The probe holds only its `_record_key`."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, probe, owner=None):
        if probe is None:
            return self
        return list(_KEPT.get(probe.__dict__.get("_record_key"), {}).get(self.name, ()))

    def __set__(self, probe, value):
        raise AttributeError(f"{self.name} is a record the probe keeps, not an attribute to set")

    def note(self, probe, value) -> None:
        key = probe.__dict__.get("_record_key")
        if isinstance(key, RecordKey):
            _KEPT.setdefault(key, {}).setdefault(self.name, []).append(value)


def recorded(probe_class, name: str, key) -> list:
    """What `probe_class.name` (a `Record`) holds under `key`: the key a probe had when it was handed to the code
    under test, so that code, setting another key in its place, files its notes elsewhere and rubs out nothing."""
    return getattr(probe_class, name).__get__(SimpleNamespace(_record_key=key))


def record_key(probe):
    """The key a probe's records are kept under (`_KEPT`), read before it is handed over."""
    return probe.__dict__["_record_key"]
