"""The records a probe keeps of what the code it is handed did, kept here, apart from the probe.

A record that decides a verdict about the code a probe is handed to is not an attribute of the probe (a list on
it could be rewritten: `model.backward_autocast[:] = [False]`, issue 38's fourth red team), and nothing on the
probe says where its records are: they are filed under the probe object itself (its identity, in `_KEPT`), so
code given the probe has no key to swap (`probe._record_key = ...` before a forbidden action and back after it
filed that action's notes elsewhere), no dict to replace and no attribute to write that changes where the next
note goes. `Record` on the probe's class reads a copy and refuses to be set; `note(probe, name, value)` adds to a
record (the probe's own methods call it; it is not reachable from the probe or its class). Under `course grade`
this module is the kernel's sealed copy (course/grading/kernel/sealed.py), which the notebook's own
`import helpers.records` does not reach.

A deep copy shares its original's records: `predict` or `accuracy` written as `copy.deepcopy(model).eval()` is
correct (the caller's model and its modes are never touched), so what the copy does must reach the probe the test
holds (`SharesRecords`). Pickling (which carries a probe to the notebook's process under `course grade`) carries
no records: the object made from the pickle keeps its own, from nothing.

`recorded(probe, name)` reads a record; the helpers that run the code under test (`asks_notebook`) hold the probe
they handed over and read its records after that code returned.
"""

import copy
import weakref

# The records, per probe: id(probe) -> (a weak reference to the probe, {record name: [values]}). Probes that share
# records (a probe and its deep copies) map to the same dict. An entry goes when its probe does.
_KEPT: "dict[int, tuple[weakref.ref, dict]]" = {}


def _book(probe, make: bool):
    """The dict of `probe`'s records (made, empty, when `make` and it has none yet), else None."""
    entry = _KEPT.get(id(probe))
    if entry is not None and entry[0]() is probe:
        return entry[1]
    return _file(probe, {}) if make else None


def _file(probe, book: dict) -> dict:
    ident = id(probe)

    def gone(ref, ident=ident):
        if _KEPT.get(ident, (None,))[0] is ref:
            del _KEPT[ident]

    _KEPT[ident] = (weakref.ref(probe, gone), book)
    return book


def share(twin, probe) -> None:
    """From now on `twin` (a deep copy of `probe`, or a loss function made for it) files its records with `probe`'s.
    A twin that keeps records of its own keeps them: nothing is re-filed."""
    if _book(twin, make=False) is None:
        _file(twin, _book(probe, make=True))


def note(probe, name: str, value) -> None:
    """Adds `value` to `probe`'s record `name`."""
    _book(probe, make=True).setdefault(name, []).append(value)


def recorded(probe, name: str) -> list:
    """A copy of what `probe`'s record `name` holds (empty if it noted nothing)."""
    book = _book(probe, make=False)
    return list(book.get(name, ())) if book is not None else []


class SharesRecords:
    """Mixed into a probe's class: `copy.deepcopy` gives a copy that shares the original's records."""

    def __deepcopy__(self, memo):
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        share(twin, self)
        state = copy.deepcopy(self.__dict__, memo)
        if hasattr(type(twin), "__setstate__"):
            twin.__setstate__(state)            # nn.Module's, as a default deepcopy would call
        else:
            twin.__dict__.update(state)
        return twin


class Record:
    """A probe's record, as its class's attribute: `probe.name` reads a copy (a list), which code given the probe
    can change without changing the record; setting or deleting `probe.name` is refused. Notes are added with
    `note(probe, name, value)`."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, probe, owner=None):
        if probe is None:
            return self
        return recorded(probe, self.name)

    def __set__(self, probe, value):
        raise AttributeError(f"{self.name} is a record the probe keeps, not an attribute to set")

    def __delete__(self, probe):
        raise AttributeError(f"{self.name} is a record the probe keeps, not an attribute to delete")
