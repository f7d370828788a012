"""Keeping student code from changing what a test means.

A test cell runs in the same Python process as the student's code, so a student can
replace what the tests rely on: `torch.allclose = lambda *a, **k: True`, a builtin, a
function of `helpers.checks`, IPython's machinery that turns a cell into code. Three
layers make that score zero instead of full marks:

1. A guard, installed in the kernel before any student cell runs, remembers every
   function and class of the modules the tests use (builtins, torch, helpers.checks,
   unittest.mock, ... and whatever the test cells import), the callables of a few
   classes (torch.Tensor, nn.Module, IPython's shell), and IPython's input hooks. Right
   before and right after every test cell the grader calls it: it puts back anything
   replaced and says what it found. A test cell during which anything had been replaced
   scores zero. A test runs with the real builtins it uses even where the notebook reuses
   their names (the notebook gets its names back afterwards); the guard itself works on a
   copy of the builtins of its own. After a test cell it also cuts the hidden
   tests out of the kernel's copies of past cells (`In`, `_i<N>`, the sources kept for
   tracebacks), which a later student cell could print, in some disguise, into its
   feedback. While a test cell runs, torch ignores the `__torch_function__` of tensor
   subclasses, and torch function modes a student left on the stack are taken off, so
   that a tensor cannot answer `torch.allclose` for itself.
2. A canary after every test cell: a failing assert with a fresh random message must
   come back as that failure. If it does not, the kernel no longer reports failures
   honestly, and every later test scores zero.
3. `suspicious_code`, a static scan of what the student wrote, so that the report can
   name the cell that did it.

A determined student who reads this file could still defeat layers 1 and 2 from
inside the kernel (anything in one process can be undone); layer 3 and the report
are there so that a TA looks at such a notebook.
"""

from __future__ import annotations

import ast
import inspect
import secrets

from .cells import HIDDEN_BEGIN, HIDDEN_END, HIDDEN_NOTE, without_hidden

# Modules whose functions and classes the tests rely on: these, plus whatever the test cells
# import from GUARDED_PACKAGES (with its parent packages and, for torch, torch.nn and friends).
GUARDED_MODULES = ("builtins", "math", "operator", "functools", "random")
WITH_TORCH = ("torch", "torch.nn", "torch.nn.functional", "torch.testing")
GUARDED_PACKAGES = ("torch", "helpers", "numpy", "unittest", "math", "random", "builtins", "operator",
                    "functools", "itertools", "collections")
GUARDED_CLASSES = ("torch.Tensor", "torch._C.TensorBase", "torch.nn.Module")

# Names IPython and ipykernel themselves rebind in builtins while they run cells.
_VOLATILE = ("_", "__", "___", "exit", "quit", "get_ipython", "display", "__IPYTHON__",
             "copyright", "credits", "license", "help", "input", "raw_input")

_GUARD = r'''
def _make_guard(shell, module_names, class_names, volatile, token, cutting_code):
    import builtins, importlib, sys, types
    real_builtins = dict(vars(builtins))
    missing = object()
    def keep(value):
        return callable(value) or isinstance(value, (types.ModuleType, property, staticmethod, classmethod))
    def snapshot(namespace):
        return {k: v for k, v in dict(namespace).items() if k not in volatile and keep(v)}
    # A function can be emptied in place (f.__code__ = ...), keeping its identity.
    innards = {}
    def remember_innards(snap):
        for value in snap.values():
            if isinstance(value, types.FunctionType):
                innards[id(value)] = (value, value.__code__, value.__defaults__, value.__kwdefaults__)
    modules = {}
    for name in module_names:
        try:
            module = importlib.import_module(name)
        except Exception:
            continue
        modules[name] = (module, snapshot(vars(module)))
        remember_innards(modules[name][1])
    classes = {}
    for name in class_names:
        owner, _, attr = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(owner), attr)
        except Exception:
            continue
        classes[name] = (cls, snapshot(vars(cls)))
    # Every class of those modules too (nn.Dropout.forward = ... keeps nn.Dropout itself).
    for name, (module, snap) in modules.items():
        for key, value in snap.items():
            if isinstance(value, type) and value.__name__ == key and f"{name}.{key}" not in classes:
                classes[f"{name}.{key}"] = (value, snapshot(vars(value)))
    kernel = getattr(shell, "kernel", None)
    session = getattr(kernel, "session", None)      # every reply and error leaves through it
    for obj, label in ((shell, "IPython shell"), (kernel, "IPython kernel")):
        if obj is not None:
            for cls in type(obj).__mro__[:-1]:
                classes[f"{label} ({cls.__name__})"] = (cls, snapshot(vars(cls)))

    import site
    libraries = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()})

    def library_rewrap(new, old):
        """A library replacing its own function with a wrapper of it (torch._dynamo does, on import)."""
        inner = new
        for _ in range(5):
            inner = getattr(inner, "__wrapped__", None)
            if inner is old:
                code = getattr(new, "__code__", None)
                return bool(code) and code.co_filename.startswith(libraries)
        return False

    def student_made(obj):
        """Defined in a cell: its module says so, or, as `__module__` can be forged, its code
        comes from outside the Python installation."""
        if isinstance(obj, property):
            return any(student_made(f) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None)
        if module == "__main__":
            return True
        func = getattr(obj, "__func__", obj)
        code = getattr(func, "__code__", None) or getattr(getattr(type(obj), "__call__", None), "__code__", None)
        return code is not None and not code.co_filename.startswith(libraries)

    def hook_lists():
        lists = [(f"IPython event {event!r}", callbacks) for event, callbacks in shell.events.callbacks.items()]
        lists += [("IPython input transformer", shell.input_transformers_cleanup),
                  ("IPython input transformer", shell.input_transformers_post),
                  ("IPython AST transformer", shell.ast_transformers)]
        return lists

    def remove_added(owner, namespace, snap, name):
        """Names student code added to a module or class the tests use: a module-level `tuple`
        shadows the builtin for that module's functions, a new property a base class's."""
        found = []
        for key in [k for k in namespace if k not in snap and k not in volatile]:
            if student_made(namespace[key]):
                try:
                    delattr(owner, key)
                except (TypeError, AttributeError):
                    continue
                found.append(f"{name}.{key} (added)")
        return found

    lent = {}       # notebook names that hide a builtin the running test uses, put aside

    def real_builtins_for_test(names, test_starts):
        """A test runs with the builtins it reads, not the notebook's names that hide them
        (`from numpy import *` rebinds `bool`; a cheat defines a `sum` that agrees with
        anything); the notebook gets its names back after the test."""
        user_ns, found = shell.user_ns, []
        if test_starts:
            lent.clear()
            for n in names:
                if n in real_builtins and user_ns.get(n, real_builtins[n]) is not real_builtins[n]:
                    lent[n] = user_ns[n]
                    user_ns[n] = real_builtins[n]
            return found
        for n, own in lent.items():
            if user_ns.get(n, missing) is not real_builtins[n]:
                found.append(f"{n} (rebound while the test ran)")
            user_ns[n] = own
        lent.clear()
        return found

    torch_state = []        # torch's __torch_function__ switch as it was before the running test

    def torch_overrides(test_starts):
        """Keep student-made __torch_function__ and its kin out of the tests.

        A tensor of the student's own subclass can answer torch.allclose with True: while a
        test runs, torch ignores __torch_function__ of subclasses (Parameter's included,
        which changes nothing). A torch function or dispatch mode on the stack can do the
        same for every tensor, and a hook on every module can switch models to eval mode:
        the student's are taken off.
        """
        torch = sys.modules.get("torch")
        if torch is None:
            return []
        C, found = torch._C, []
        modes = [C._pop_torch_function_stack() for _ in range(C._len_torch_function_stack())]
        for mode in reversed(modes):            # bottom of the stack first
            if student_made(mode):
                found.append(f"a torch function mode ({type(mode).__name__})")
            else:
                C._push_on_torch_function_stack(mode)
        dispatch = sys.modules.get("torch.utils._python_dispatch")    # a mode there answers torch's operators
        modes = [dispatch._pop_mode() for _ in range(C._len_torch_dispatch_stack())] if dispatch else []
        for mode in reversed(modes):
            if student_made(mode):
                found.append(f"a torch dispatch mode ({type(mode).__name__})")
            else:
                dispatch._push_mode(mode)
        hooks = sys.modules.get("torch.nn.modules.module")
        for key, value in list(vars(hooks).items()) if hooks is not None else ():
            if key.startswith("_global_") and isinstance(value, dict):     # hooks on every module
                for hook_id, hook in list(value.items()):
                    if callable(hook) and student_made(hook):
                        del value[hook_id]
                        found.append(f"a hook on every torch module ({key})")
        state = C._get_torch_function_state()
        if test_starts:
            torch_state[:] = [state]
            C._set_torch_function_state(C._TorchFunctionState.SUBCLASSES_DISABLED)
        elif torch_state:
            if state != C._TorchFunctionState.SUBCLASSES_DISABLED:
                found.append("torch's switch for __torch_function__")
            C._set_torch_function_state(torch_state.pop())
        return found

    tools = {}
    exec(cutting_code, tools)   # cells.without_hidden, with the markers it needs
    without_hidden = tools["without_hidden"]

    def forget_hidden_tests():
        """Cut the hidden tests out of the copies of past cells a student cell could read
        back (In, _ih, _i<N>, the raw history and its database rows, the sources kept for tracebacks)."""
        import linecache

        marker = tools["HIDDEN_BEGIN"]
        history = shell.history_manager
        for past in (history.input_hist_parsed, history.input_hist_raw):
            for i, text in enumerate(past):
                if isinstance(text, str) and marker in text:
                    past[i] = without_hidden(text)
        for i, row in enumerate(history.db_input_cache):   # rows for a history file (none is written)
            if any(isinstance(part, str) and marker in part for part in row):
                history.db_input_cache[i] = tuple(without_hidden(p) if isinstance(p, str) else p for p in row)
        for attr in ("_i00", "_i", "_ii", "_iii"):     # IPython copies these into _i, _ii, _iii each cell
            value = getattr(history, attr, None)
            if isinstance(value, str) and marker in value:
                setattr(history, attr, without_hidden(value))
        user_ns = shell.user_ns
        for key, value in list(user_ns.items()):
            if key.startswith("_i") and isinstance(value, str) and marker in value:
                user_ns[key] = without_hidden(value)
        for key, entry in list(linecache.cache.items()):
            if len(entry) == 4 and isinstance(entry[2], list) and any(marker in line for line in entry[2]):
                lines = [line + "\n" for line in without_hidden("".join(entry[2])).splitlines()]
                linecache.cache[key] = (sum(map(len, lines)), entry[1], lines, entry[3])

    def guard(bindings=(), test_starts=False, builtins_read=()):
        """Put back what was replaced; returns (token, what was found).

        `bindings`: (name, module, attribute) for each name a test cell imported into the
        notebook's namespace, which must still be that module's attribute. `test_starts`:
        called right before a test cell (else right after one). `builtins_read`: the
        builtins the test cell uses.
        """
        found = torch_overrides(test_starts) + real_builtins_for_test(builtins_read, test_starts)
        if not test_starts:
            forget_hidden_tests()
        for value, code, defaults, kwdefaults in innards.values():
            if value.__code__ is not code or value.__defaults__ is not defaults \
                    or value.__kwdefaults__ is not kwdefaults:
                value.__code__, value.__defaults__, value.__kwdefaults__ = code, defaults, kwdefaults
                found.append(f"{value.__module__}.{value.__qualname__} (its code)")
        for name, (module, snap) in modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                found.append(f"sys.modules[{name!r}]")
            namespace = vars(module)
            for key, value in snap.items():
                current = namespace.get(key, missing)
                if current is value:
                    continue
                if library_rewrap(current, value):
                    snap[key] = current
                    continue
                setattr(module, key, value)
                found.append(f"{name}.{key}")
            found += remove_added(module, namespace, snap, name)
        for name, (cls, snap) in classes.items():
            namespace = vars(cls)
            for key, value in snap.items():
                current = namespace.get(key, missing)
                if current is not value and not library_rewrap(current, value):
                    try:
                        setattr(cls, key, value)
                    except (TypeError, AttributeError):
                        pass
                    found.append(f"{name}.{key}")
            found += remove_added(cls, namespace, snap, name)
        for obj, label in ((shell, "IPython shell"), (kernel, "IPython kernel"), (session, "kernel session")):
            if obj is None:
                continue
            for key, value in list(vars(obj).items()):
                if callable(value) and student_made(value):
                    delattr(obj, key)
                    found.append(f"{label}.{key}")
        for label, hooks in hook_lists():
            for hook in list(hooks):
                if student_made(hook):
                    hooks.remove(hook)
                    found.append(label)
        if sys.gettrace() is not None:
            sys.settrace(None)
            found.append("sys.settrace")
        if sys.getprofile() is not None:
            sys.setprofile(None)
            found.append("sys.setprofile")
        user_ns = shell.user_ns
        for name, module_name, attr in bindings:
            entry = modules.get(module_name)
            expected = entry[1].get(attr, missing) if entry else missing
            if expected is missing:
                module = sys.modules.get(module_name)
                expected = getattr(module, attr, missing) if module is not None else missing
            # A name the test never got to bind (it stopped before that import, at a missing or
            # wrong answer) was not replaced by anyone: the failed test scores zero as it is.
            if expected is not missing and name in user_ns and user_ns[name] is not expected:
                user_ns[name] = expected
                found.append(f"{name} (as the test imported it from {module_name})")
        return token, sorted(set(found))
    return guard
'''


def guard_name() -> str:
    """A fresh, unguessable name for the guard in the kernel's namespace."""
    return "_" + secrets.token_hex(8)


def guard_token() -> str:
    """What the real guard answers with: a guard a student put in its place does not know it."""
    return secrets.token_hex(8)


def install_code(name: str, modules: list[str], token: str) -> str:
    """Kernel code that defines the guard as `name` (and hides it from %who)."""
    classes = [c for c in GUARDED_CLASSES if c.split(".")[0] in {m.split(".")[0] for m in modules}]
    cutting = (f"HIDDEN_BEGIN, HIDDEN_END, HIDDEN_NOTE = {HIDDEN_BEGIN!r}, {HIDDEN_END!r}, {HIDDEN_NOTE!r}\n"
               + inspect.getsource(without_hidden))
    arguments = f"{modules!r}, {classes!r}, {set(_VOLATILE)!r}, {token!r}, {cutting!r}"
    # The guard lives in a namespace of its own, with a copy of the builtins taken now, before
    # any student cell: in the notebook's namespace a student's `list = [...]` would be its `list`.
    return (f"def _course_install():\n"
            f"    import builtins\n"
            f"    namespace = {{'__builtins__': dict(vars(builtins))}}\n"
            f"    exec({_GUARD!r}, namespace)\n"
            f"    return namespace['_make_guard'](get_ipython(), {arguments})\n"
            f"{name} = _course_install()\n"
            f"del _course_install\nget_ipython().user_ns_hidden[{name!r}] = None\n")


def call_expression(name: str, bindings=(), test_starts: bool = False, builtins_read=()) -> str:
    return f"{name}({list(bindings)!r}, {test_starts!r}, {list(builtins_read)!r})"


def builtins_read(source: str) -> list[str]:
    """The builtins a test cell uses: names it reads, never binds, that builtins defines."""
    import builtins

    tree = _parse(source)
    if tree is None:
        return []
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(name for name in read - bound if hasattr(builtins, name) and not name.startswith("_"))


def imported_names(source: str) -> list[tuple[str, str, str]]:
    """(name, module, attribute) for every `from M import a [as b]` of a guarded package in `source`."""
    tree = _parse(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[0] in GUARDED_PACKAGES:
            found += [(alias.asname or alias.name, node.module, alias.name) for alias in node.names if alias.name != "*"]
    return found


def guarded_modules(test_sources: list[str]) -> list[str]:
    """GUARDED_MODULES plus the modules the test cells import from the guarded packages."""
    names = list(GUARDED_MODULES)
    for source in test_sources:
        tree = _parse(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            found = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # `from unittest import mock` imports a module too; names that are not modules
                # are skipped by the guard.
                found = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for module in found:
                if module.split(".")[0] not in GUARDED_PACKAGES:
                    continue
                parts = module.split(".")
                wanted = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
                if parts[0] == "torch":
                    wanted += WITH_TORCH
                for m in wanted:
                    if m not in names:
                        names.append(m)
    return names


def canary() -> tuple[str, str]:
    """(code, message): code whose execution must fail with an AssertionError carrying `message`."""
    message = "canary " + secrets.token_hex(8)
    a, b = secrets.randbelow(1 << 30), (1 << 30) + secrets.randbelow(1 << 30)
    return f"assert {a} == {b}, {message!r}", message


def canary_held(reply: dict | None, message: str) -> bool:
    return bool(reply) and reply.get("status") == "error" and reply.get("ename") == "AssertionError" \
        and message in str(reply.get("evalue", ""))


# -- static scan ----------------------------------------------------------------------------------

_TAMPER_MODULE_ROOTS = {"torch", "builtins", "helpers", "math", "numpy", "np", "unittest", "mock", "sys", "nn", "F"}
_SUSPICIOUS_CALLS = {
    ("sys", "settrace"): "installs a trace function",
    ("sys", "setprofile"): "installs a profile function",
    ("gc", "get_objects"): "walks every object in memory",
    ("gc", "get_referrers"): "walks the references of objects",
    ("sys", "_getframe"): "reads the caller's frame",
    ("inspect", "currentframe"): "reads the caller's frame",
    ("inspect", "stack"): "reads the call stack",
    ("importlib", "reload"): "reloads a module",
    ("signal", "alarm"): "schedules a signal for later (it may strike in another cell)",
    ("signal", "setitimer"): "schedules a signal for later (it may strike in another cell)",
    ("os", "symlink"): "makes a symbolic link",
    ("os", "link"): "makes a hard link",
}


# Attributes whose assignment changes what a function does while it stays the same object.
_FUNCTION_INNARDS = {"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__module__", "__class__"}
# Methods through which objects answer torch's or numpy's operations (allclose, ==) themselves.
_OWN_OPERATORS = {
    "__torch_function__": "overrides torch functions for its own tensors (__torch_function__)",
    "__torch_dispatch__": "overrides torch's operators (__torch_dispatch__)",
    "__array_ufunc__": "overrides numpy's operations for its own arrays (__array_ufunc__)",
    "__array_function__": "overrides numpy's functions for its own arrays (__array_function__)",
}
# The cell history, where the hidden tests that already ran can be read back.
_HISTORY = {"In", "Out", "_ih", "_oh", "_i", "_ii", "_iii"}
# IPython's and ipykernel's insides: no exercise needs them.
_KERNEL_INTERNALS = {"session", "get_parent", "parent_header", "_parent_header", "input_transformers_post",
                     "input_transformers_cleanup", "ast_transformers", "showtraceback", "run_cell", "run_cell_async",
                     "run_ast_nodes", "excepthook"}


def suspicious_code(source: str) -> list[str]:
    """Why `source` (a student's cell) looks like it tampers with the grading; empty if it does not."""
    tree = _parse(source)
    if tree is None:
        return []
    reasons = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            # Setting a flag such as torch.backends.cudnn.benchmark = True replaces nothing.
            flag = isinstance(getattr(node, "value", None), ast.Constant)
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                dotted = _dotted(target)
                if isinstance(target, ast.Attribute) and target.attr in _FUNCTION_INNARDS:
                    reasons.append(f"replaces the {target.attr} of {_dotted(target.value) or 'an object'}")
                if flag:
                    continue
                if isinstance(target, ast.Attribute) and dotted and dotted.split(".")[0] in _TAMPER_MODULE_ROOTS:
                    reasons.append(f"replaces {dotted}")
                if isinstance(target, ast.Subscript) and _dotted(target.value) in ("sys.modules", "__builtins__"):
                    reasons.append(f"changes {_dotted(target.value)}")
                if isinstance(target, ast.Subscript) and _dotted(target.value) in ("globals", "vars", "locals"):
                    reasons.append("rebinds names through globals()")
        elif isinstance(node, ast.Call):
            func = _dotted(node.func)
            if func in ("setattr", "delattr") and node.args:
                owner = _dotted(node.args[0])
                if owner and owner.split(".")[0] in _TAMPER_MODULE_ROOTS:
                    reasons.append(f"{func} on {owner}")
            if func and "." in func:
                module, _, attr = func.rpartition(".")
                if (module.split(".")[-1], attr) in _SUSPICIOUS_CALLS:
                    reasons.append(_SUSPICIOUS_CALLS[(module.split(".")[-1], attr)])
            if func and func.endswith(("input_transformers_cleanup.append", "input_transformers_post.append",
                                       "ast_transformers.append", "input_transformers_cleanup.insert",
                                       "input_transformers_post.insert", "ast_transformers.insert",
                                       "events.register")):
                reasons.append("hooks into IPython's cell execution")
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            reasons.append("uses __builtins__")
        elif isinstance(node, ast.Name) and node.id in _HISTORY:
            reasons.append(f"reads the executed cells ({node.id})")
        elif isinstance(node, ast.Attribute) and node.attr in _KERNEL_INTERNALS:
            reasons.append(f"reaches into IPython's machinery (.{node.attr})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _OWN_OPERATORS:
            reasons.append(_OWN_OPERATORS[node.name])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__class__":
            reasons.append("claims to be of another class (__class__)")
    return sorted(set(reasons))


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return None


def _parse(source: str) -> ast.Module | None:
    """A cell's syntax tree, or None for a cell that is not Python (a student's typo)."""
    try:
        return ast.parse(_without_magics(source))
    except SyntaxError:
        return None


def _without_magics(source: str) -> str:
    """IPython magics and shell escapes are not Python; blank them out before parsing."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
