"""Each release notebook, half done, opened in JupyterLab in a real (headless) Chromium: a student's walk.

Half its exercises are answered (one of them wrongly, `tests/half_done.py`), the others left as
released. The notebook must open unmodified; Run All (the menu, as a student clicks it) must run
every cell, with no Python error shown anywhere (test cells of unwritten or wrong exercises say so
and the run goes on); the Self-check at the end must name every exercise with its state; the
widgets must render. Screenshots of the notebook and of its self-check are kept in
test-artifacts/browser/. Skipped, with the reason, where Debian's chromium is missing.
"""

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from course.notebook import cells
from course.checkout import Course
from half_done import half_done
from grading_support import ROOT

COURSE = Course(ROOT)
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts" / "browser"
TOKEN = "course-browser-test"
# As root and on a machine without network: no sandbox, no background requests.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# tests/conftest.py skips them, saying why, where Playwright or Debian's chromium is missing.
pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.xdist_group("browser")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser_copy(assignment: str, dest: Path) -> dict[str, str]:
    """The release folder, its notebook half done as a student leaves it (no tag added, nothing
    else changed); returns each exercise's state."""
    shutil.copytree(COURSE.release_dir(assignment), dest / assignment)
    nb, states = half_done(assignment)
    # The kernel tells JupyterLab its Python's version when it starts, and a notebook built with another
    # Python's shows as modified then: the student's own doing, not the build's. Here it is this Python's.
    nb.metadata.setdefault("language_info", {})["version"] = platform.python_version()
    nbformat.write(nb, str(dest / assignment / f"{assignment}.ipynb"))
    return states


# The state of every code cell's prompt: "" (never ran), "*" (running or queued) or a number.
PROMPTS_JS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')]
    .map(c => (c.querySelector('.jp-InputArea-prompt')?.textContent || '').replace(/[\\[\\]:\\s]/g, ''))"""
IDLE_JS = "() => !!document.querySelector(\".jp-Notebook-ExecutionIndicator[data-status='idle']\")"
ERRORS_JS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')]
    .map((c, i) => [i, c.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
                          ?.textContent.trim().split('\\n').pop()])
    .filter(([i, e]) => e)"""
DIRTY_JS = "() => [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].map(t => t.textContent)"


def run_all_cells(page, panel: str) -> None:
    """Run > Run All Cells, and make sure the run started: the menu item is disabled, and a
    click on it does nothing, until the notebook is the current widget (on a slow machine it
    may not be yet when the page looks ready), so focus it first and retry."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.click(f"{panel} .jp-Cell >> nth=0")
    for _ in range(3):
        page.click("li.lm-MenuBar-item:has-text('Run')")
        page.click("li.lm-Menu-item:has-text('Run All Cells') >> nth=0")
        try:
            page.wait_for_function(f"() => ({PROMPTS_JS})().some(p => p !== '')", timeout=30_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            page.click(f"{panel} .jp-Cell >> nth=0")
    raise AssertionError("Run All Cells did not start the notebook")


def wait_until_run_ends(page, assignment: str, limit: float = 420, stalled_after: float = 30) -> None:
    """Wait until every code cell has run; fail early, saying where, if the run stopped short
    (a cell raised an error the test did not expect, or the kernel died)."""
    deadline = time.monotonic() + limit
    stopped_since = None
    while time.monotonic() < deadline:
        prompts = page.evaluate(PROMPTS_JS)
        idle = page.evaluate(IDLE_JS)
        if idle and prompts and all(p.isdigit() for p in prompts):
            return
        stopped = idle and "*" not in prompts
        stopped_since = (stopped_since or time.monotonic()) if stopped else None
        if stopped_since and time.monotonic() - stopped_since > stalled_after:
            break
        page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / f"{assignment}-stopped.png"), full_page=False)
    first_unrun = next((i for i, p in enumerate(prompts) if not p.isdigit()), None)
    raise AssertionError(f"{assignment}: the run stopped at code cell {first_unrun} of {len(prompts)} "
                         f"(prompts {prompts}); errors shown: {page.evaluate(ERRORS_JS)}")


@contextmanager
def jupyter_lab(root: Path):
    """JupyterLab serving `root`, started in `root` (where nbgrader reads nbgrader_config.py), and a
    headless Chromium: yields (browser, base URL)."""
    port = free_port()
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    # Render every cell (no virtual scrolling), so that widgets can be found and scrolled to.
    notebook_settings = root / ".lab-settings" / "@jupyterlab" / "notebook-extension"
    notebook_settings.mkdir(parents=True)
    (notebook_settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(root / ".jupyter-config"),
               JUPYTERLAB_SETTINGS_DIR=str(root / ".lab-settings"))
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         "--ip=127.0.0.1", f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield browser, base
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    with jupyter_lab(root) as (browser, base):
        yield browser, base, root


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_release_notebook_runs_in_jupyterlab(lab, assignment):
    browser, base, root = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    states = browser_copy(assignment, root)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    # A workspace of its own, reset: no notebook from an earlier test is restored beside this one.
    page.goto(f"{base}/lab/tree/{assignment}/{assignment}.ipynb?reset&token={TOKEN}")
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in front, whatever else is open
    page.wait_for_selector(f"{panel} .jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_selector(f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    page.wait_for_timeout(1000)     # the kernel has told JupyterLab its language_info by now
    assert page.evaluate(DIRTY_JS) == [], "the notebook shows as modified as soon as it opens"

    run_all_cells(page, panel)
    wait_until_run_ends(page, assignment)
    widgets = page.locator(".jp-OutputArea .jupyter-widgets").count()
    page.keyboard.press("Control+s")
    page.wait_for_timeout(1500)
    widget_visible = False
    if widgets:  # the screenshot shows the first widget as a student sees it
        page.evaluate("document.querySelector('.jp-OutputArea .jupyter-widgets')"
                      ".scrollIntoView({block: 'center'})")
        page.wait_for_timeout(1000)
        widget_visible = page.evaluate("[...document.querySelectorAll('.jp-OutputArea .jupyter-widgets')]"
                                       ".some(w => w.offsetWidth > 0 && w.offsetHeight > 0)")
    page.screenshot(path=str(ARTIFACTS / f"{assignment}.png"), full_page=False)
    report = page.locator(f"{panel} .jp-CodeCell:has-text('self_check(')").first
    report.scroll_into_view_if_needed()
    report.screenshot(path=str(ARTIFACTS / f"{assignment}-selfcheck.png"))
    shown_report = report.locator(".jp-OutputArea").inner_text()
    page.click("li.lm-MenuBar-item:has-text('File')")
    page.click("li.lm-Menu-item:has-text('Close All Tabs')")  # the next notebook opens alone
    page.wait_for_timeout(1000)
    page.close()

    saved = nbformat.read(str(root / assignment / f"{assignment}.ipynb"), as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "some cells never ran"
    errors = [(cells.grade_id(c) or i, o.ename) for i, c in enumerate(code) for o in c.outputs
              if o.output_type == "error"]
    assert not errors, errors
    for exercise, state in states.items():
        line = next((shown.split() for shown in shown_report.splitlines() if shown.split()[1:2] == [exercise]), None)
        assert line, f"the Self-check, as shown, does not name {exercise}:\n{shown_report}"
        assert line[0] in {"answered": ("PASS",), "untouched": ("TODO",), "wrong": ("PASS", "FAIL")}[state], line
    reference = cells.read(COURSE.reference_notebook(assignment))
    expects_widgets = any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                          for c in reference.cells if c.cell_type == "code" for o in c.outputs)
    if expects_widgets:
        assert widgets > 0 and widget_visible, "the notebook displays widgets, but none rendered in JupyterLab"
