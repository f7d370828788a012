"""What the names in a student's cell stand for, read from its syntax alone (`course.grading.integrity` asks):
the dotted name an expression spells, what an import binds and under which alias, the names a cell binds to a
module or a class, an object's attribute dict. Nothing here runs or imports the cell's code.
"""

from __future__ import annotations

import ast

# What loads a module under a name of the cell's choosing (an alias a replacement can go through).
MODULE_GETTERS = {"importlib.import_module", "__import__", "sys.modules.get"}


def import_map(tree: ast.Module) -> dict[str, str]:
    """Each name an import binds, with what it stands for: `import sys as s` -> s: sys, `from gc import
    get_objects as g` -> g: gc.get_objects."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def canonical(dotted: str | None, imported: dict[str, str]) -> str | None:
    """`dotted` with its first name replaced by what the cell imported under it (`s.modules.get` -> sys.modules.get)."""
    if not dotted:
        return dotted
    first, dot, rest = dotted.partition(".")
    return imported.get(first, first) + dot + rest


def attribute_dict(node) -> str:
    """The object whose attribute dict `node` is (`x.__dict__`, `vars(x)`), by name; empty if it is none or `self`
    (a class of the student's setting its own attributes)."""
    owner = node.value if isinstance(node, ast.Attribute) and node.attr == "__dict__" else \
        node.args[0] if isinstance(node, ast.Call) and dotted(node.func) == "vars" and node.args else None
    if owner is None or dotted(owner) == "self":
        return ""
    return dotted(owner) or "an object"


def is_text(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def class_of(node, classes: set[str]) -> str | None:
    """`x` when `node` is `type(x)` or `x.__class__` (or a name the cell bound to one of those), else None."""
    if isinstance(node, ast.Call) and dotted(node.func) == "type" and len(node.args) == 1:
        return dotted(node.args[0]) or "an object"
    if isinstance(node, ast.Attribute) and node.attr == "__class__":
        return dotted(node.value) or "an object"
    if isinstance(node, ast.Name) and node.id in classes:
        return node.id
    return None


def class_aliases(tree: ast.Module) -> set[str]:
    """Names the cell binds to `type(x)` or `x.__class__` (`cls = type(loader)`), and names bound to those."""
    found: set[str] = set()
    while True:
        more = {name for value, target in bindings(tree) if class_of(value, found)
                for name in names(target)} - found
        if not more:
            return found
        found |= more


def imported_names(tree: ast.Module) -> set[str]:
    """Every name an import binds (a module, or what was taken from one)."""
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def namespace_of(node, roots: set[str]) -> str | None:
    """`X` when `node` is `vars(X)` or `X.__dict__` for a module the tests use (or an alias of one)."""
    if isinstance(node, ast.Call) and dotted(node.func) == "vars" and node.args:
        owner = dotted(node.args[0])
    elif isinstance(node, ast.Call) and dotted(node.func) == "getattr" and len(node.args) >= 2 \
            and isinstance(node.args[1], ast.Constant) and node.args[1].value == "__dict__":
        owner = dotted(node.args[0])
    elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
        owner = dotted(node.value)
    else:
        return None
    return owner if owner and owner.split(".")[0] in roots else None


def aliases(tree: ast.Module, modules: set[str]) -> set[str]:
    """Names the cell binds to a module of those tests use (`import helpers.probes_devices as probes`,
    `m = sys.modules["torch"]`, `m = helpers.probes_devices`, and names bound to those in turn):
    replacing something through them is replacing it in the module."""
    found = imported_aliases(tree, modules)
    while True:     # `a = helpers.x` then `b = a`: follow the chain
        more = {name for value, target in bindings(tree)
                if roots(value) & (modules | found)
                for name in names(target)} - found
        if not more:
            return found
        found |= more


def roots(value) -> set[str]:
    """The names a bound value may be: `os` for `os`, `os.path`, `[os][0]`, `(os, 1)[0]`, `os or x`, `os if c else x`."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, (ast.List, ast.Tuple)):
        return {root for element in value.value.elts for root in roots(element)}
    if isinstance(value, ast.BoolOp):
        return {root for operand in value.values for root in roots(operand)}
    if isinstance(value, ast.IfExp):
        return roots(value.body) | roots(value.orelse)
    if isinstance(value, ast.Call):       # what a call returns is not the module it was called from (torch.randn(3))
        return set()
    spelled = dotted(value)
    return {spelled.split(".")[0]} if spelled else set()


def bindings(tree: ast.Module):
    """(value, target) for each way a cell binds a name to a value: `=`, `:=`, `for ... in`, `with ... as`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
                    yield from zip(node.value.elts, target.elts)
                else:
                    yield node.value, target
        elif isinstance(node, ast.NamedExpr):
            yield node.value, node.target
        elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, (ast.Tuple, ast.List)):
            for value in node.iter.elts:
                yield value, node.target
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            yield node.context_expr, node.optional_vars


def names(target) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in names(t)]
    return []


def imported_aliases(tree: ast.Module, modules: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            for alias in node.names:
                full = f"{module}.{alias.name}" if module else alias.name
                if full.split(".")[0] in modules and alias.asname:
                    found.add(alias.asname)
                elif module.split(".")[0] in modules and module:
                    found.add(alias.asname or alias.name)
        elif isinstance(node, ast.Assign) and (
                isinstance(node.value, ast.Subscript) and dotted(node.value.value) == "sys.modules"
                or isinstance(node.value, ast.Call) and dotted(node.value.func) in MODULE_GETTERS):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def dotted(node) -> str | None:
    """The dotted name an expression spells (`torch.nn.functional.relu`); a call stands for what it calls (`f(x).y`
    is `f.y`), a walrus for its value; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        return dotted(node.func)
    if isinstance(node, ast.NamedExpr):      # (m := helpers.x).y: the value's name
        return dotted(node.value)
    return None


def parse(source: str) -> ast.Module | None:
    """A cell's syntax tree, or None for a cell that is not Python (a student's typo)."""
    try:
        return ast.parse(without_magics(source))
    except SyntaxError:
        return None


def without_magics(source: str) -> str:
    """IPython magics and shell escapes are not Python; blank them out before parsing."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
