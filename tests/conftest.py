"""Test tiers (the markers are registered in pyproject.toml) and skips for what a machine lacks.

- `pytest -m "not slow"`: the fast tier, unit tests only (under a minute on two cores).
- `./test.sh` (the README's test command, CI's): everything.

`e2e`, `browser` and `venv` tests are slow by definition: they get `slow` here, so a file need not say
it twice (the reference notebooks nbval re-runs get `e2e` and `slow` from ../conftest.py). A `browser`
test is skipped, with the reason, where Playwright or Debian's chromium is missing; a `sandbox` test
where bubblewrap is missing or cannot create its namespaces here.
"""

import functools
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# The test support modules sit next to the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

CHROMIUM = Path("/usr/bin/chromium")
SLOW_BY_NATURE = ("e2e", "browser", "venv")
# pyproject.toml makes every warning an error; the fast tier passes so. The slow tier, not yet run so end to end,
# keeps the filters it had (over pyproject's: a mark's filters come after the configuration's): DeprecationWarning
# ignored, other warnings shown. A test module's own filterwarnings mark still comes after these.
SLOW_TIER_WARNINGS = pytest.mark.filterwarnings("default", "ignore::DeprecationWarning")


@functools.cache
def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install -r requirements.txt)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found: install Debian's chromium"
    return None


@functools.cache
def sandbox_missing() -> str | None:
    """Why bubblewrap cannot sandbox here, or None: missing, or unable to make its namespaces."""
    # $COURSE_BWRAP (empty: none), else PATH's, as course grade finds it
    from course.grading.sandbox.policy import find_bwrap

    bwrap = find_bwrap()
    if bwrap is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    trial = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
                           capture_output=True, text=True, timeout=60)
    if trial.returncode != 0:
        detail = (trial.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot create its namespaces here: {detail}"
    return None


@pytest.hookimpl(tryfirst=True)     # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_BY_NATURE) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("browser") and browser_missing():
            item.add_marker(pytest.mark.skip(reason=browser_missing()))
        if item.get_closest_marker("sandbox") and sandbox_missing():
            item.add_marker(pytest.mark.skip(reason=sandbox_missing()))


def pytest_collection_finish(session):
    # After every conftest has said which tests are slow (../conftest.py marks the notebooks nbval runs).
    for item in session.items:
        if item.get_closest_marker("slow"):
            item.add_marker(SLOW_TIER_WARNINGS)


def pytest_report_header(config):
    # Say where plain nbgrader's grades come from (tests/plain_record.py): read from a record, or graded now.
    import os

    import plain_record
    from grading_support import COURSE

    if os.environ.get("COURSE_PLAIN_LIVE"):
        return "plain nbgrader: graded in this run (COURSE_PLAIN_LIVE)"
    recorded = plain_record.fresh(COURSE)
    live = [a for a in COURSE.assignments() if a not in recorded]
    return (f"plain nbgrader: read from tests/recorded/ for {', '.join(recorded) or 'no assignment'}; "
            f"graded in this run for {', '.join(live) or 'no assignment'}")
