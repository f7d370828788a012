"""The self-check a student can run at any time: every visible test, one line per exercise.

The visible tests come from `helpers/selfcheck_data/<assignment>.json`, which `course build`
writes from the student release, so the hidden tests are never in it. It works wherever the
course package is installed (JupyterLab, Colab), without needing the notebook file itself.
"""

import contextlib
import io
import json
from dataclasses import dataclass
from importlib import resources


@dataclass
class ExerciseResult:
    exercise: str
    status: str        # "PASS", "FAIL", "TODO" (not written yet) or "ERROR"
    message: str = ""


def visible_tests(assignment: str) -> dict[str, list[str]]:
    """{exercise: [code of each visible test cell]} for `assignment`, in notebook order."""
    data = resources.files("helpers") / "selfcheck_data" / f"{assignment}.json"
    return json.loads(data.read_text())["exercises"]


def _run_one(code: str, namespace: dict) -> tuple[str, str]:
    scope = dict(namespace)  # the test's own names must not leak into the student's notebook
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<visible test>", "exec"), scope)
    except NotImplementedError:
        return "TODO", "not written yet (still raises NotImplementedError)"
    except AssertionError as failure:
        return "FAIL", str(failure) or "an assertion failed"
    except Exception as error:  # the student's code crashed inside the test
        return "ERROR", f"{type(error).__name__}: {error}"
    return "PASS", ""


def run(assignment: str, namespace: dict) -> list[ExerciseResult]:
    """Run the visible tests of `assignment` against the names defined in `namespace`."""
    results = []
    for exercise, tests in visible_tests(assignment).items():
        status, message = "PASS", ""
        for code in tests:
            status, message = _run_one(code, namespace)
            if status != "PASS":
                break
        results.append(ExerciseResult(exercise, status, message))
    return results


def self_check(assignment: str, namespace: dict) -> None:
    """Print one line per exercise and a total. Pass `globals()` from the notebook."""
    results = run(assignment, namespace)
    print(f"Self-check of {assignment}: visible tests only (grading adds hidden tests)")
    for r in results:
        print(f"  {r.status:5} {r.exercise}" + (f": {r.message}" if r.message else ""))
    passed = sum(r.status == "PASS" for r in results)
    print(f"{passed}/{len(results)} exercises pass their visible tests")
