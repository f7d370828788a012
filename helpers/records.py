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

What a probe notes is decided by its class's code, so that code is kept as it was made (issue 38's fifth red team:
`type(loss_fn).__call__ = ...`, `scaler._note_autocast = ...` kept full marks for wrong answers). A probe's class
is `Sealed`: setting or deleting an attribute of the class is refused, and so is setting or deleting, on a probe
(a `Probe`), an attribute that would hide one of its class's methods or properties (`model.forward = ...`,
`probe.__class__ = ...`); `changed(objects)`, which `asks_notebook` runs before and after the code under test, names
what was changed anyway by ways around both (`type.__setattr__`, `object.__setattr__`, `vars(probe)[...]`), and the
test then fails with that message. The probes call their own helpers as functions of their module, not through the
instance, so that nothing put on an instance for a while and taken off again changes what they note.
"""

import copy
import weakref

import torch

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


class Sealed(type):
    """The metaclass of a probe's class: its attributes are kept as they were made (see the module's docstring)."""

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace, **kwargs)
        _AS_MADE[cls] = dict(vars(cls))

    def __setattr__(cls, name, value):
        raise AttributeError(f"{cls.__name__} is a class of the course's probes: its {name} cannot be changed")

    def __delattr__(cls, name):
        raise AttributeError(f"{cls.__name__} is a class of the course's probes: its {name} cannot be deleted")


class SealedTensor(Sealed, type(torch.Tensor)):
    """`Sealed` for a probe that is a tensor (torch's tensor classes have a metaclass of their own)."""


# What the probes read of torch's state, through torch's own functions as they were when this module loaded (before
# any student code, in the kernel's sealed copy too): code that puts a function of its own at `torch.is_grad_enabled`
# while it runs (issue 38's fifth red team) changes what its own code reads there, not what a probe notes.
grad_enabled = torch._C.is_grad_enabled
autocast_enabled = torch._C.is_autocast_enabled
autocast_dtype = torch._C.get_autocast_dtype


def autocast_on() -> bool:
    """Whether autocast is on, on the CPU or CUDA (what a backward pass or an optimizer step must run outside)."""
    return any(autocast_enabled(kind) for kind in ("cpu", "cuda"))


# Each Sealed class (the course's, and any made from them) -> its attributes as it was made.
_AS_MADE: "dict[type, dict]" = {}
# Where the grader runs these modules from a copy sealed when the kernel started (course/grading/kernel/sealed.py),
# it sets this: a function that names what was rebound, added or deleted in that copy's modules and builtins since.
# In a student's own notebook it stays None.
sealed_changes = None


def _hides_a_method(cls, name: str) -> bool:
    """Whether an attribute `name` set on an object of `cls` would hide one of the class's methods (what an object's
    own attribute can hide: a function, a static or class method; a property or a `Record` it cannot), or changes
    the object's class (`__class__`)."""
    if name == "__class__":
        return True
    for klass in cls.__mro__:
        if name in vars(klass):
            kind = type(vars(klass)[name])
            return hasattr(kind, "__get__") and not hasattr(kind, "__set__")
    return False


class Probe(metaclass=Sealed):
    """Mixed into a probe's class: the class is Sealed, and an attribute that would hide one of its methods cannot
    be set on, or deleted from, the probe."""

    __slots__ = ()

    def __setattr__(self, name, value):
        if _hides_a_method(type(self), name):
            raise AttributeError(f"{name} of {type(self).__name__} is the probe's own: it cannot be replaced")
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if _hides_a_method(type(self), name):
            raise AttributeError(f"{name} of {type(self).__name__} is the probe's own: it cannot be deleted")
        super().__delattr__(name)


class ProbeChanged(AssertionError):
    """A probe's class or a probe handed to the code under test was changed: the test cannot tell what that code
    did, so it fails."""


def changed(objects=()) -> list[str]:
    """What was changed, past the refusals above, in the probe classes, in the probes among `objects` or in any probe
    that keeps records: empty if nothing."""
    gone = object()
    found = [f"{cls.__name__}.{name}" for cls, made in _AS_MADE.items() for name in set(made) | set(vars(cls))
             if vars(cls).get(name, gone) is not made.get(name, gone)]
    probes = [obj for obj in objects if isinstance(obj, Probe)] + [ref() for ref, _ in list(_KEPT.values())]
    for probe in {id(p): p for p in probes if p is not None}.values():
        found += [f"{name} of a {type(probe).__name__}" for name in getattr(probe, "__dict__", {})
                  if _hides_a_method(type(probe), name)]
    if sealed_changes is not None:
        found += sealed_changes()
    return found


def check_unchanged(objects) -> None:
    """Raises ProbeChanged naming what `changed(objects)` found."""
    found = changed(objects)
    if found:
        raise ProbeChanged("the course's probes were changed while the test ran (" + ", ".join(sorted(found)) +
                           "): the test cannot tell what the code did. Write the exercise without changing the "
                           "objects the test hands it, or their classes")


class SharesRecords(Probe):
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
