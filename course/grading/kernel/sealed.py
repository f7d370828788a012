"""The course's `helpers` as they were when the kernel started: the copy the answer server
(course.grading.kernel.answer_server) finds the course's probes in.

Sent into the kernel as text and run there when the kernel starts, before any student cell
(`course.grading.kernel.loading.load_code`), in the answer server's own module, just before the
server's text. Standard library only (and whatever `helpers` imports).
"""

import copyreg as _copyreg
import importlib as _importlib
import operator as _operator
import os as _os


class _ModuleByName:
    """Pickled as `importlib.import_module(name)`: the module of that name where the pickle is read."""

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return _importlib.import_module, (self.name,)


class _ClassByName(_ModuleByName):
    """Pickled as the class of that name (module and qualname) where the pickle is read."""

    def __init__(self, cls):
        super().__init__(cls.__module__)
        self.qualname = cls.__qualname__

    def __reduce__(self):
        return _operator.attrgetter(self.qualname), (_ModuleByName(self.name),)


def _pickled_as_public(obj):
    """How an object of a sealed class is pickled (copyreg): as it would be, with its class named by module and
    qualname, the public class where the pickle is read. (By reference, pickle would refuse the sealed class: it
    is not the one `sys.modules` names. The student's `torch.save(model)` of a model the test handed it works as
    under plain nbgrader.)"""
    func, args, *rest = obj.__reduce_ex__(2)
    if func is _copyreg.__newobj__ and len(args) == 1:     # pickle's NEWOBJ wants the class itself: the same, by call
        func, args = _copyreg._reconstructor, (args[0], object, None)
    args = tuple(_ClassByName(a) if isinstance(a, type) and a.__module__ in _SEALED.modules
                 and vars(_SEALED.modules[a.__module__]).get(a.__name__) is a else a for a in args)
    return (func, args, *rest)


# Names Python itself keeps in a module's namespace as it runs (the warnings a module's code already gave).
_KEPT_BY_PYTHON = {"__warningregistry__"}


class _Sealed:
    """The course's `helpers` as they were when the kernel started, before any student code: a private copy, loaded
    apart from `sys.modules`, whose every import of `helpers` (at a module's top or inside a function) gives the
    sealed module, and whose builtins are the kernel's as they were then. A probe the grader asks for by name
    (`helpers.notebook_state.asks_notebook`) runs from here, so a notebook that replaces `helpers.x.probe`, or
    something a probe uses, in the modules it imports changes nothing the probe does. Not a wall: the student's
    code runs in this process; it is a place no answer has reason to reach, and reaching it is flagged
    (course.grading.integrity: the answer server's names)."""

    PRELOAD = ("notebook_state", "patching", "checks", "records", "pretend_cuda", "plot_reading", "probes_debugging",
               "probes_devices", "probes_memory", "probes_parallel", "probes_serialization", "probes_training")

    def __init__(self):
        import builtins
        import importlib.util

        self.modules = {}
        self.as_made = {}      # each preloaded module's names -> their values when it was loaded
        self.builtins = dict(vars(builtins))
        self.builtins["__import__"] = self.import_
        self._import, self._spec_at, self._from_spec = builtins.__import__, importlib.util.spec_from_file_location, \
            importlib.util.module_from_spec
        try:
            spec = importlib.util.find_spec("helpers")
        except (ImportError, ValueError):
            spec = None
        self.root = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
        for name in self.PRELOAD if self.root else ():
            try:
                self.load(f"helpers.{name}")
            except Exception:  # noqa: BLE001 - a course without that module: asked for later, it is refused
                pass
        records = self.modules.get("helpers.records")
        if records is not None:         # every probe's check (records.changed) also asks what changed here
            records.sealed_changes = self.changes
        self.as_made = {name: dict(vars(module)) for name, module in self.modules.items()}
        self.builtins_as_made = dict(self.builtins)

    def changes(self) -> list:
        """The names rebound, added or deleted since the kernel started in the preloaded modules' namespaces and in
        their builtins (a probe's note-taker replaced, a name that shadows a builtin added); a module loaded later
        as a submodule of one of them is no change."""
        gone, found = object(), []
        spaces = [(name, vars(self.modules[name]), made) for name, made in self.as_made.items()]
        for name, now, made in spaces + [("builtins", self.builtins, self.builtins_as_made)]:
            for key in (set(made) | set(now)) - _KEPT_BY_PYTHON:
                if now.get(key, gone) is not made.get(key, gone) and not (
                        key not in made and self.modules.get(f"{name}.{key}") is now[key]):
                    found.append(f"{name}.{key}")
        return found

    @staticmethod
    def holds(name) -> bool:
        return type(name) is str and (name == "helpers" or name.startswith("helpers."))

    def load(self, name):
        """The sealed module `name` (helpers or one of its modules), loaded from its file the first time."""
        if name in self.modules:
            return self.modules[name]
        if self.root is None or not self.holds(name) or ".." in name:
            raise ImportError(f"no sealed module {name!r}")
        parts = name.split(".")[1:]
        parent = self.load("helpers") if parts else None
        path = _os.path.join(self.root, *parts)
        if _os.path.isfile(_os.path.join(path, "__init__.py")):
            spec = self._spec_at(name, _os.path.join(path, "__init__.py"), submodule_search_locations=[path])
        elif _os.path.isfile(path + ".py"):
            spec = self._spec_at(name, path + ".py")
        else:
            raise ImportError(f"no sealed module {name!r}")
        module = self._from_spec(spec)
        module.__builtins__ = self.builtins
        self.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del self.modules[name]
            raise
        if parent is not None:
            setattr(parent, parts[-1], module)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                _copyreg.pickle(value, _pickled_as_public)
        return module

    def find(self, module, qualname):
        """What `module.qualname` names in the sealed copy (the module loaded the first time it is asked for)."""
        found = self.load(module)
        for part in qualname.split("."):
            found = getattr(found, part)
        return found

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """`__import__` for the sealed modules: `helpers` from here, anything else as Python imports it."""
        absolute = name
        if level:
            package = (globals or {}).get("__package__") or ""
            base = package.rsplit(".", level - 1)[0] if level > 1 else package
            absolute = f"{base}.{name}" if name else base
        if not self.holds(absolute):
            return self._import(name, globals, locals, fromlist, level)
        module = self.load(absolute)
        for item in fromlist or ():
            if item != "*" and not hasattr(module, item):
                try:
                    self.load(f"{absolute}.{item}")
                except ImportError:
                    pass
        return module if fromlist else self.load("helpers")


_SEALED = _Sealed()     # when the kernel starts, before any student code
