"""The self-check a student can run at any time: every visible test, one line per exercise.

The visible tests come from `helpers/selfcheck_data/<assignment>.json`, which `course build`
writes from the student release, so the hidden tests are never in it. It works wherever the
course package is installed (JupyterLab, Colab), without needing the notebook file itself.

Each exercise is reported as one of:

- PASS     its visible tests pass (grading adds hidden tests);
- FAIL     a visible test fails, with the reason (a check's message, or the error the code raised);
- TODO     not written yet (it still raises NotImplementedError);
- NOT RUN  a name its tests need is not defined in the notebook yet: the cell that defines it
           was never run (since the kernel started), and the line says which cell to run.

It never stops with a Python error of its own.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
from dataclasses import dataclass
from importlib import resources

from helpers.exercises import reason, strict

STATUSES = ("PASS", "FAIL", "TODO", "NOT RUN")


@dataclass
class ExerciseResult:
    exercise: str
    status: str        # one of STATUSES
    message: str = ""
    where: str = ""    # "Exercise 5": where the exercise is in the notebook


def _data(assignment: str) -> dict:
    data = resources.files("helpers") / "selfcheck_data" / f"{assignment}.json"
    return json.loads(data.read_text())


def visible_tests(assignment: str) -> dict[str, list[str]]:
    """{exercise: [code of each visible test cell]} for `assignment`, in notebook order."""
    return _data(assignment)["exercises"]


def names_of(source: str) -> tuple[list[str], set[str]]:
    """The names `source` reads but never binds itself (those it takes from the notebook), and those it binds.
    One definition for the self-check and for `course grade`'s judge (course/grading/verdicts/judge.py)."""
    tree = ast.parse(source)
    bound, read = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read.append(node.id) if isinstance(node.ctx, ast.Load) else bound.add(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({name for name in read if name not in bound and not hasattr(builtins, name)}), bound


def _run_one(code: str, namespace: dict) -> tuple[str, str]:
    scope = dict(namespace)  # the test's own names must not leak into the student's notebook
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), strict():
            exec(compile(code, "<visible test>", "exec"), scope)
    except NotImplementedError:
        return "TODO", "not written yet (it still raises NotImplementedError)"
    except Exception as error:  # noqa: BLE001 - a failing check or the student's code crashing inside the test
        if isinstance(error, AssertionError):
            return "FAIL", reason(error)
        return "FAIL", f"your code raised {reason(error)}"
    return "PASS", ""


def run(assignment: str, namespace: dict) -> list[ExerciseResult]:
    """Run the visible tests of `assignment` against the names defined in `namespace`."""
    data = _data(assignment)
    places = data.get("where", {})
    results = []
    for exercise, tests in data["exercises"].items():
        place = places.get(exercise, "")
        missing = [name for code in tests for name in names_of(code)[0] if name not in namespace]
        if missing:
            name = missing[0]
            cell = (f"the cell of {place} that defines {name}" if name == exercise and place
                    else f"the cell that defines {name}")
            results.append(ExerciseResult(exercise, "NOT RUN", f"{name} is not defined: run {cell}, then this one",
                                          place))
            continue
        status, message = "PASS", ""
        for code in tests:
            status, message = _run_one(code, namespace)
            if status != "PASS":
                break
        results.append(ExerciseResult(exercise, status, message, place))
    return results


def self_check(assignment: str, namespace: dict) -> None:
    """Print one line per exercise and a total. Pass `globals()` from the notebook."""
    results = run(assignment, namespace)
    print(f"Self-check of {assignment}: visible tests only (grading adds hidden tests)")
    for r in results:
        label = f"{r.exercise} ({r.where})" if r.where and r.status != "PASS" else r.exercise
        print(f"  {r.status:7} {label}" + (f": {r.message}" if r.message else ""))
    counts = {status: sum(r.status == status for r in results) for status in STATUSES}
    others = ", ".join(f"{n} {s}" for s, n in counts.items() if n and s != "PASS")
    print(f"{counts['PASS']}/{len(results)} exercises pass their visible tests" + (f" ({others})" if others else ""))
