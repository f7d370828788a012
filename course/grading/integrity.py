"""A static scan of the code a student handed in, for the report: `suspicious_code`.

No test runs in the student's kernel (`course.grading.verdicts.judge`): nothing a notebook replaces,
hooks or reads there can change a verdict. A cell that tries (replaces something the tests
use, reads the call stack or the kernel's insides, fakes its class) still deserves a TA's
look, and its feedback is held back: the report names it as "looks like tampering".
"""

from __future__ import annotations

import ast
import contextlib
import re
import importlib.util
from pathlib import Path

from course.grading.cell_names import (aliases, attribute_dict, canonical, class_aliases, class_of, dotted,
                                        import_map, imported_names, is_text, namespace_of, parse)

# Modules whose attributes a test or its probe uses (the payload of 04 writes through `os`).
_TAMPER_MODULE_ROOTS = {"torch", "builtins", "helpers", "math", "numpy", "np", "unittest", "mock", "sys", "nn", "F",
                        "os", "posix", "io"}
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
    ("os", "mkfifo"): "makes a named pipe",
    ("os", "mknod"): "makes a special file",
    ("inspect", "getclosurevars"): "reads the variables a function closes over",
    ("inspect", "signature"): "reads a function's signature (its defaults)",
    ("sys", "_current_frames"): "reads every thread's frame",
    ("traceback", "walk_stack"): "reads the call stack",
}
# pathlib's ways to the same: any object's method of that name.
_SUSPICIOUS_METHODS = {"symlink_to": "makes a symbolic link", "hardlink_to": "makes a hard link",
                       "link_to": "makes a hard link"}
# Importing by a name given at run time: `[importlib.import_module("helpers." + name)][0]` binds no alias to follow.
_RUN_TIME_IMPORTS = {"import_module", "__import__", "importlib.import_module", "importlib.__import__",
                     "sys.modules.get"}
# The grader's answer server in the kernel (course.grading.kernel.answer_server): patched, it forges what the kernel reports.
_SERVER_NAMES = ("_course_answers", "_course_serve", "_SERVERS", "_SEALED", "_Server")
# The course's own names in the kernel (a probe's or a payload's, in builtins or anywhere): no answer needs one. In a
# string, only where a name starts ("pytorch_course_section10", a folder, is a student's path).
_COURSE_PREFIX = "_course_"
_COURSE_NAME_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])_course_")


# Attributes whose assignment changes what a function does while it stays the same object.
_FUNCTION_INNARDS = {"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__module__", "__class__"}
# What reading tells whether a function is the one it was (a probe's stand-in swaps a function's code), or copies
# it to keep the original: no exercise reads a function's insides.
_FUNCTION_INSIDES = {"__code__", "__kwdefaults__", "__defaults__", "__closure__", "__wrapped__", "co_name", "co_code",
                     "__globals__"}
# A frame's links: from an exception's traceback up to the caller's frame, its globals and locals (a probe's).
_FRAME_LINKS = {"tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "gi_frame", "cr_frame"}
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
                     "run_ast_nodes", "excepthook", "iopub_socket", "send_response"}


# torch's switches for its function and dispatch overrides: inside them a TorchFunctionMode or a TorchDispatchMode (a
# probe's counter) sees nothing.
_OVERRIDE_SWITCHES = {"DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch",
                      "_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_pop_torch_dispatch_stack",
                      "_pop_torch_function_stack"}
# Setting an attribute past the object's own rules (a probe refuses to have its methods replaced: helpers/records.py).
_PAST_THE_RULES = {"__setattr__", "__delattr__"}


# Which of torch's overrides are active: an answer that asks can tell a probe's watch from a real run.
_OVERRIDE_READERS = {"_len_torch_dispatch_stack", "_get_dispatch_stack_at", "_len_torch_function_stack",
                     "_get_function_stack_at", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
                     "_get_current_function_mode", "_get_current_function_mode_stack", "_is_torch_function_mode_enabled",
                     "_is_torch_function_enabled", "is_in_torch_dispatch_mode", "any_torch_dispatch_mode_on_stack"}
# Code built at run time: what it runs cannot be read here.
_CODE_RUNNERS = {"exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile"}
_CODE_RUNNER_MODULES = {"code", "codeop", "runpy"}
# Modules whose names a star import would bind unseen (gc.get_objects, sys._getframe, inspect.stack, ...).
_NO_STAR = {"gc", "sys", "inspect", "builtins", "traceback", "operator", "copyreg", "importlib", "ctypes"}
# Ways to every object in the process (the course's sealed probe modules among them), by attribute or by text.
_OBJECT_WALKERS = {"get_objects", "get_referrers", "get_referents", "dispatch_table"}
# Dict writes through a function rather than a method (operator.setitem(vars(m), ...)).
_DICT_WRITERS = {"operator.setitem", "operator.delitem", "operator.__setitem__", "operator.__delitem__",
                 "dict.__setitem__", "dict.__delitem__", "dict.update", "dict.pop", "dict.setdefault", "dict.clear"}


def _probe_names() -> frozenset[str]:
    """The classes of the course's probes (helpers/probes_*.py, helpers/records.py), by name: an answer that names
    one (`type(model).__name__ == "LoopProbe"`) behaves one way under test and another for the student. Read from
    the source files, nothing of helpers is imported into the TA's process."""
    spec = importlib.util.find_spec("helpers")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    folder = Path(next(iter(spec.submodule_search_locations)))
    names = set()
    for path in [*folder.glob("probes_*.py"), folder / "records.py"]:
        with contextlib.suppress(OSError, SyntaxError, ValueError):
            names |= {node.name for node in ast.parse(path.read_text()).body
                      if isinstance(node, ast.ClassDef) and len(node.name) >= 6 and node.name != "Record"}
    return frozenset(names)


_PROBES = _probe_names()
_PROBE_MODULES = ("helpers.probes_", "helpers.records", "helpers.notebook_state")


# A cell larger than this is not parsed here (the scan runs in the TA's process): it is named instead.
MAX_SCANNED = 1 << 20
UNSCANNABLE = "cannot be read by the scan (too large, or nested too deeply)"


def suspicious_code(source: str) -> list[str]:
    """Why `source` (a student's cell) looks like it tampers with the grading; empty if it does not."""
    if len(source) > MAX_SCANNED:
        return [UNSCANNABLE]
    try:
        tree = parse(source)
        return [] if tree is None else _reasons(tree)
    except (RecursionError, MemoryError):   # a deep expression: no honest cell is one
        return [UNSCANNABLE]
    except Exception as error:              # noqa: BLE001 - a cell the scan's own rules trip on is named, the run goes on
        return [f"could not be read by the scan ({type(error).__name__}): a TA should look"]


def _reasons(tree: ast.Module) -> list[str]:
    reasons = []
    roots = _TAMPER_MODULE_ROOTS | aliases(tree, _TAMPER_MODULE_ROOTS)
    # The cell's own variables: `for _i in range(3)` binds a name of the history's, it reads no history.
    own = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    classes = class_aliases(tree)
    modules = roots | imported_names(tree)
    reasons += _setattr_on_arguments(tree)
    imported = import_map(tree)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for text in _texts(tree):
        reasons += _text_reasons(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(text in _PROBES for text in _compared_texts(node)):
            reasons.append("compares a name with one of the course's probes (an answer that knows it is watched is "
                           "judged on what it does then)")
        if isinstance(node, ast.Attribute) and node.attr == "__subclasses__":
            reasons.append("walks a class's subclasses (the course's probe classes among them)")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _NO_STAR \
                and any(alias.name == "*" for alias in node.names):
            reasons.append(f"imports every name of {node.module} (*), which the scan cannot follow")
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (getattr(node, "module", None) or alias.name).split(".")[0] in _CODE_RUNNER_MODULES for alias in node.names):
            reasons.append("runs code it builds at run time (code, codeop, runpy): what it runs cannot be read here")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _CODE_RUNNERS \
                and node.id not in defined and not _called(node, tree):
            reasons.append(f"takes {node.id} as a value (a way to run code built at run time under another name)")
        if isinstance(node, (ast.For, ast.comprehension)) and dotted(node.iter) == "sys.modules":
            reasons.append("walks sys.modules")
        if isinstance(node, ast.Attribute) and node.attr in _OVERRIDE_READERS \
                or isinstance(node, ast.alias) and node.name.split(".")[-1] in _OVERRIDE_READERS:
            reasons.append("asks which of torch's overrides are active (how a probe watches a call)")
        if isinstance(node, ast.Attribute) and node.attr in _OBJECT_WALKERS \
                or isinstance(node, ast.alias) and node.name.split(".")[-1] in _OBJECT_WALKERS:
            reasons.append("walks the objects of the process (the garbage collector's lists or the pickling registry)")
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (getattr(node, "module", None) or alias.name).split(".")[0] == "copyreg" for alias in node.names):
            reasons.append("reads the pickling registry (copyreg), where the course's probe classes are listed")
        if isinstance(node, ast.Name) and node.id.startswith(_SERVER_NAMES) \
                or isinstance(node, ast.Attribute) and node.attr.startswith(_SERVER_NAMES):
            reasons.append("reaches into the grader's answer server in the kernel")
        elif isinstance(node, ast.Name) and node.id.startswith(_COURSE_PREFIX) \
                or isinstance(node, ast.Attribute) and node.attr.startswith(_COURSE_PREFIX):
            reasons.append(f"uses the grader's own names in the kernel ({_COURSE_PREFIX}...)")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            # Setting a flag such as torch.backends.cudnn.benchmark = True (or = deterministic) replaces nothing.
            flag = isinstance(getattr(node, "value", None), ast.Constant) or isinstance(node, ast.Assign) and all(
                (dotted(t) or "").startswith("torch.backends.") for t in node.targets)
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                spelled = dotted(target)
                if isinstance(target, ast.Attribute) and target.attr in _FUNCTION_INNARDS:
                    reasons.append(f"replaces the {target.attr} of {dotted(target.value) or 'an object'}")
                if isinstance(target, ast.Subscript) and namespace_of(target.value, roots):
                    reasons.append(f"changes the namespace of {namespace_of(target.value, roots)}")
                elif isinstance(target, ast.Subscript) and attribute_dict(target.value):
                    reasons.append(f"changes the attributes of {attribute_dict(target.value)} through its __dict__")
                if isinstance(target, ast.Attribute) and class_of(target.value, classes) not in (None, "self"):
                    reasons.append(f"changes the class of {class_of(target.value, classes)} (.{target.attr})")
                if isinstance(target, ast.Attribute) and _private(target.attr) and dotted(target.value) != "self":
                    reasons.append(f"changes a private attribute of {dotted(target.value) or 'an object'} "
                                   f"(.{target.attr})")
                if flag:
                    continue
                if isinstance(target, ast.Attribute) and spelled and spelled.split(".")[0] in roots:
                    reasons.append(f"replaces {spelled}")
                if isinstance(target, ast.Subscript) and dotted(target.value) in ("sys.modules", "__builtins__"):
                    reasons.append(f"changes {dotted(target.value)}")
                if isinstance(target, ast.Subscript) and dotted(target.value) in ("globals", "vars", "locals"):
                    reasons.append("rebinds names through globals()")
        elif isinstance(node, ast.Call):
            func = canonical(dotted(node.func), imported)
            if func in _CODE_RUNNERS and func.rpartition(".")[2] not in defined:
                reasons.append(f"runs code it builds at run time ({func}): what it runs cannot be read here")
            if func in _DICT_WRITERS and node.args and (attribute_dict(node.args[0]) or namespace_of(node.args[0], roots)):
                reasons.append(f"changes the attributes of {attribute_dict(node.args[0]) or namespace_of(node.args[0], roots)} "
                               f"through its __dict__ ({func})")
            if func in ("setattr", "delattr") and node.args:
                owner = dotted(node.args[0])
                if owner and owner.split(".")[0] in modules:
                    reasons.append(f"{func} on {owner}")
                if class_of(node.args[0], classes) not in (None, "self"):
                    reasons.append(f"{func} on the class of {class_of(node.args[0], classes)}")
                if len(node.args) >= 2 and not is_text(node.args[1]) and owner != "self":
                    reasons.append(f"sets an attribute by a name it builds ({func})")
                elif len(node.args) >= 2 and is_text(node.args[1]) and _private(node.args[1].value) and owner != "self":
                    reasons.append(f"changes a private attribute of {owner or 'an object'} ({func})")
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "setdefault", "__setitem__", "pop") \
                    and namespace_of(node.func.value, roots):
                reasons.append(f"changes the namespace of {namespace_of(node.func.value, roots)}")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "setdefault", "__setitem__", "pop",
                                                                             "__delitem__", "clear", "popitem") \
                    and attribute_dict(node.func.value):
                reasons.append(f"changes the attributes of {attribute_dict(node.func.value)} through its __dict__")
            if isinstance(node.func, ast.Attribute) and node.func.attr in _PAST_THE_RULES \
                    and dotted(node.func.value) not in ("super", "self") \
                    and not (node.args and dotted(node.args[0]) == "self"):    # a frozen dataclass's own __post_init__
                reasons.append(f"sets an attribute past its object's own rules ({dotted(node.func) or node.func.attr})")
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SUSPICIOUS_METHODS:
                reasons.append(_SUSPICIOUS_METHODS[node.func.attr])
            if func in ("sys.modules.update", "sys.modules.pop", "sys.modules.setdefault", "sys.modules.__setitem__",
                        "sys.modules.clear", "sys.modules.popitem") or any(dotted(arg) == "sys.modules" or (
                    isinstance(arg, ast.Constant) and arg.value == "sys.modules") for arg in node.args) \
                    and func and func.endswith("patch.dict"):
                reasons.append("changes sys.modules")
            if func in _RUN_TIME_IMPORTS or func and func.endswith((".import_module", ".__import__")):
                reasons.append(f"imports a module at run time ({func}): no exercise needs it, and a module the tests "
                               "use can be reached that way")
            if func in ("sys.modules.items", "sys.modules.values", "sys.modules.keys", "sys.modules.copy") \
                    or func in ("list", "dict", "tuple", "iter", "vars") and any(
                        dotted(arg) == "sys.modules" for arg in node.args):
                reasons.append("walks sys.modules")
            if func == "getattr" and len(node.args) >= 2 and (
                    _joined(node.args[1]) in _FUNCTION_INSIDES
                    or _joined(node.args[1]) is None and _reached(node.args[0], classes)):
                reasons.append("reads an attribute by a name it builds or a function's insides (getattr)")
            if isinstance(node.func, ast.Attribute) and node.func.attr == "__getattribute__" \
                    and dotted(node.func.value) not in ("super", "self"):
                reasons.append("reads an attribute past its object's own rules (__getattribute__)")
            if func in ("timeit.timeit", "timeit.repeat", "timeit.Timer") and any(k.arg == "globals" for k in node.keywords):
                reasons.append("runs code it builds at run time (timeit with globals)")
            if func and "." in func:
                module, _, attr = func.rpartition(".")
                if (module.split(".")[-1], attr) in _SUSPICIOUS_CALLS:
                    reasons.append(_SUSPICIOUS_CALLS[(module.split(".")[-1], attr)])
            if func and func.endswith(("input_transformers_cleanup.append", "input_transformers_post.append",
                                       "ast_transformers.append", "input_transformers_cleanup.insert",
                                       "input_transformers_post.insert", "ast_transformers.insert",
                                       "events.register")):
                reasons.append("hooks into IPython's cell execution")
        if isinstance(node, ast.Attribute) and node.attr in _OVERRIDE_SWITCHES \
                or isinstance(node, ast.Name) and node.id in _OVERRIDE_SWITCHES \
                or isinstance(node, ast.alias) and node.name.split(".")[-1] in _OVERRIDE_SWITCHES:
            reasons.append("switches off torch's function or dispatch overrides (DisableTorchFunction and the like)")
        if isinstance(node, ast.Name) and node.id == "__builtins__":
            reasons.append("uses __builtins__")
        elif isinstance(node, ast.Name) and node.id in _HISTORY and node.id not in own:
            reasons.append(f"reads the executed cells ({node.id})")
        elif isinstance(node, ast.Attribute) and node.attr in _KERNEL_INTERNALS and dotted(node.value) != "self":
            reasons.append(f"reaches into IPython's machinery (.{node.attr})")
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in _FUNCTION_INSIDES:
            reasons.append(f"reads the insides of a function (.{node.attr})")
        elif isinstance(node, ast.Attribute) and node.attr in _FRAME_LINKS:
            reasons.append(f"reads the call stack through a frame (.{node.attr})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _OWN_OPERATORS:
            reasons.append(_OWN_OPERATORS[node.name])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__class__":
            reasons.append("claims to be of another class (__class__)")
    return sorted(set(reasons))


def _texts(tree: ast.Module) -> set[str]:
    """Every string the cell writes: its constants, and constants joined by + or in an f-string without a value
    (`"_SEAL" + "ED"`), as the cell would build them."""
    found = set()
    for node in ast.walk(tree):
        text = _joined(node)
        if text is not None:
            found.add(text)
    return found


def _joined(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined(node.left), _joined(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values)
    return None


def _compared_texts(node: ast.Compare) -> set[str]:
    """The strings a comparison compares with (`type(m).__name__ == "LoopProbe"`, `name in ("A", "B")`)."""
    found = set()
    for side in [node.left, *node.comparators]:
        for part in side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]:
            text = _joined(part)
            if text is not None:
                found.add(text)
    return found


def _called(name: ast.Name, tree: ast.Module) -> bool:
    """Whether `name` is what a call calls (`exec(...)`), not a value handed on (`run = exec`)."""
    return any(isinstance(n, ast.Call) and n.func is name for n in ast.walk(tree))


def _reached(owner, classes: set[str]) -> bool:
    """Whether `owner` (what getattr reads from) is reached through a call or a class (`type(probe).forward`), not
    a plain name or attribute chain (`getattr(model, f"fc{i}")`, `getattr(nn, activation)`)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(owner)) or class_of(owner, classes) is not None


def _text_reasons(text: str) -> list[str]:
    """What a string the cell builds says: the grader's own names, a function's insides or a frame's links by name
    (`attrgetter("__globals__")`), torch's override switches, one of the course's probe modules."""
    reasons = []
    if any(n in text for n in _SERVER_NAMES):
        reasons.append("reaches into the grader's answer server in the kernel")
    elif _COURSE_NAME_IN_TEXT.search(text):
        reasons.append(f"uses the grader's own names in the kernel ({_COURSE_PREFIX}...)")
    if text in _OVERRIDE_READERS or text in _OVERRIDE_SWITCHES:
        reasons.append(f"names one of torch's override switches or readers in a string ('{text}')")
    if text in _FUNCTION_INSIDES or text in _FRAME_LINKS or text in _OBJECT_WALKERS or text in _KERNEL_INTERNALS:
        reasons.append(f"names a function's insides, a frame's links, an object walker or IPython's machinery in a "
                       f"string ('{text}')")
    if text.startswith(_PROBE_MODULES):
        reasons.append(f"names one of the course's probe modules ('{text}')")
    return reasons


def _private(name: str) -> bool:
    """`_name`: an object's own business (a probe's method or note-taker), not `__dunder__`."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _setattr_on_arguments(tree: ast.Module) -> list[str]:
    """`setattr(owner, ...)` / `delattr(owner, ...)` where `owner` is an argument of the function it is in (not
    `self`): a helper that sets attributes of whatever it is given (a module the tests use, a probe)."""
    reasons = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        arguments = function.args
        params = ({a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
                  | {a.arg for a in (arguments.vararg, arguments.kwarg) if a}) - {"self"}
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and dotted(node.func) in ("setattr", "delattr") and node.args \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id in params:
                name = getattr(function, "name", "a lambda")
                reasons.append(f"{dotted(node.func)} on {node.args[0].id}, an argument of {name}")
    return reasons
