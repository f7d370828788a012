"""Nothing a student's notebook carries runs in the TA's browser (issue 38, deliverable 1), end to end.

A real, sandboxed `course grade` grades a tiny course (tests/e2e/test_grade_mechanics.py's `mini_course`) for
three students: `ana` answers correctly and displays, besides an honest printed line and an honest PNG, every
kind of active content a notebook can carry (HTML with an `<img onerror>`, HTML with a `<script>`, a
JavaScript output, an SVG with `onload`, a `text/markdown` output with a `javascript:` link, a Markdown cell
and a raw cell of her own with script in them); `mal` hands in a JSON file whose nbformat version is an
`<img onerror>` (not a notebook: graded zero, a stand-in in `autograded/` whose report quotes it); `tom`
answers correctly and gives a cell a grade id that is an `<img onerror>` (graded, flagged: formgrader's
comment quotes it, and so does his feedback once formgrader's Generate Feedback button, the flag taken off,
writes it again). Every payload, were it to run, sets `window.__pwned`, asks for a URL
under `SENTINEL` and opens an alert.

Then formgrader's manual grading page of each submission (JupyterLab started in the class folder as the
README says) and each feedback file (as a student opens it, from disk, and as JupyterLab serves it) are
opened in a headless Chromium: no payload may have run (`window.__pwned` undefined, no dialog, no request
to the sentinel, no `javascript:` link), and the honest outputs (the text, the PNG at its size) are shown.
Screenshots in test-artifacts/inert/.
"""

import base64
import json
import shutil
import struct
import zlib
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.submissions import with_answers
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.notebook.classdir import ClassDir
from course.notebook.nbgrader_runs import submit
from course.tools.demo import CLASS_CONFIG
from e2e.test_browser import ROOT, TOKEN, jupyter_lab
from e2e.test_formgrader_browser import ARTIFACTS as formgrader_artifacts
from e2e.test_formgrader_browser import _button, _rows
from e2e.test_grade_mechanics import MINI, mini_course

ARTIFACTS = ROOT / "test-artifacts" / "inert"
pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.e2e, pytest.mark.xdist_group("inert-browser")]

SENTINEL = "http://pwned.invalid/"
HONEST_TEXT = "honest text: 42 apples"
SIDE = 23           # the honest PNG's width and height, in pixels


def _run(n: int) -> str:
    """What payload `n` runs, if anything lets it: visible to the test three ways."""
    return f"window.__pwned={n};fetch('{SENTINEL}{n}');alert({n})"


def _png(side: int) -> bytes:
    """A `side` x `side` opaque red PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * side for _ in range(side))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


HONEST = (f"import base64\nfrom IPython.display import Image, display\nprint({HONEST_TEXT!r})\n"
          f"display(Image(data=base64.b64decode({base64.b64encode(_png(SIDE)).decode()!r})))")
IMPORT = "from IPython.display import HTML, Javascript, Markdown, SVG, display\n"
ACTIVE_OUTPUTS = [IMPORT + f"display({kind}({payload!r}))" for kind, payload in [
    ("HTML", '<img src=x onerror="' + _run(1) + '">'),
    ("HTML", "<b>bold</b><script>" + _run(2) + "</script>"),
    ("Javascript", _run(3)),
    ("SVG", '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="' + _run(4) + '">'
            '<rect width="10" height="10"/></svg>'),
    ("Markdown", "[click me](javascript:" + _run(5) + ")"),
]]
STUDENT_MARKDOWN = f'My notes <img src=x onerror="{_run(6)}">'
STUDENT_RAW = f"<script>{_run(7)}</script>"
NOT_A_NOTEBOOK = {"nbformat": f'<img src=x onerror="{_run(8)}">', "cells": []}
GRADE_ID = f'<img src=x onerror="{_run(9)}">'
RIGHT = "def double(x):\n    return 2 * x"

# Whatever may have run on the page, and the honest outputs shown.
SEEN_JS = f"""() => ({{
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    javascript_links: [...document.querySelectorAll('a')].filter(a => a.href.startsWith('javascript:')).length,
    scripts_with_payload: [...document.querySelectorAll('script')].filter(s => s.text.includes('__pwned')).length,
    handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(
        a => a.name.startsWith('on') && a.value.includes('__pwned'))).length,
    text: document.body.innerText,
    pngs: [...document.querySelectorAll('img')].filter(i => i.src.startsWith('data:image/png')
        && i.complete && i.naturalWidth === {SIDE} && i.naturalHeight === {SIDE}
        && i.getBoundingClientRect().width > 0).length,
}})"""


def _release(course) -> nbformat.NotebookNode:
    release = nbformat.read(str(course.source_notebook(MINI)), as_version=4)
    release.cells[2].source = 'def double(x):\n    """Twice x."""\n    raise NotImplementedError()'
    return release


def _hand_in(class_dir: Path, course) -> None:
    nb = with_answers(_release(course), {"double": RIGHT})
    nb.cells[3:3] = ([nbformat.v4.new_code_cell(HONEST)] + [nbformat.v4.new_code_cell(c) for c in ACTIVE_OUTPUTS]
                     + [nbformat.v4.new_markdown_cell(STUDENT_MARKDOWN),
                        nbformat.v4.new_raw_cell(STUDENT_RAW, metadata={"raw_mimetype": "text/html"})])
    submit(class_dir, MINI, "ana", nb)

    path = ClassDir(class_dir).submitted("mal", MINI) / f"{MINI}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(NOT_A_NOTEBOOK))

    nb = with_answers(_release(course), {"double": RIGHT})
    nb.cells.insert(3, nbformat.v4.new_code_cell(HONEST, metadata={"nbgrader": {
        "schema_version": 3, "grade": False, "solution": False, "locked": False, "task": False,
        "grade_id": GRADE_ID}}))
    submit(class_dir, MINI, "tom", nb)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The class, graded by `course grade` in its sandbox, set up for formgrader; and the run."""
    tmp = tmp_path_factory.mktemp("inert")
    course = mini_course(tmp / "course")
    class_dir = tmp / "class"
    class_dir.mkdir()
    (class_dir / "nbgrader_config.py").write_text(CLASS_CONFIG.format(course_config=str(course.config)))
    _hand_in(class_dir, course)
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=2), say=lambda *a, **k: None)
    return class_dir, run


def _look(context, url: str, name: str, ready: str | None = None) -> tuple[dict, list, list]:
    """Open `url` in a fresh page of `context` (logged in to JupyterLab); returns what SEEN_JS saw, the dialogs
    opened and the requests made to the sentinel."""
    page = context.new_page()
    dialogs, requests = [], []

    def dialog(d):
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.on("request", lambda r: requests.append(r.url) if r.url.startswith(SENTINEL) else None)
    page.goto(url)
    if ready:
        try:
            page.wait_for_function(ready, timeout=60_000)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / f"{name}-not-ready.png"), full_page=True)
            raise AssertionError(f"{url} did not load: {page.inner_text('body')[:2000]}") from None
    page.wait_for_load_state("load")
    page.wait_for_timeout(1500)     # an onerror, onload or fetch has long happened by now
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    seen = page.evaluate(SEEN_JS)
    page.close()
    return seen, dialogs, requests


def _inert(seen: dict, dialogs: list, requests: list, where: str) -> None:
    ran = {key: seen[key] for key in ("pwned", "javascript_links", "scripts_with_payload", "handlers") if seen[key]}
    assert not ran and not dialogs and not requests, (where, ran, dialogs, requests)


def test_no_student_script_runs_in_formgrader_or_feedback(graded_class):
    class_dir, run = graded_class
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    assert not run.ungraded, run.report
    assert run.scores[("ana", MINI)] == (1.0, 1.0) and run.scores[("tom", MINI)] == (1.0, 1.0), run.scores
    assert run.scores[("mal", MINI)] == (0.0, 1.0), run.scores
    problems = {student: " ".join(p.what for p in found) for (student, _), found in run.problems.items()}
    assert "<img src=x" in problems["mal"] and GRADE_ID in problems["tom"], problems      # the payloads got there
    standin = (ClassDir(class_dir).autograded("mal", MINI) / f"{MINI}.ipynb").read_text()
    assert "onerror" in standin

    db_url = f"sqlite:///{class_dir / 'gradebook.db'}"
    with Gradebook(db_url) as gb:
        ids = {s: gb.find_submission_notebook(MINI, MINI, s).id for s in ("ana", "mal", "tom")}
    with jupyter_lab(class_dir) as (browser, base):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        login = context.new_page()
        login.goto(f"{base}/formgrader?token={TOKEN}")      # the cookie the pages below share
        login.close()
        for student, submission in ids.items():
            # The manual grading page: the autograded notebook (or its stand-in) and the comment box.
            seen, dialogs, requests = _look(
                context, f"{base}/formgrader/submissions/{submission}/", f"formgrader-{student}",
                "() => typeof formgrader !== 'undefined' && formgrader.grades?.loaded && formgrader.comments?.loaded")
            _inert(seen, dialogs, requests, f"formgrader, {student}")
            if student == "mal":
                assert "could not be graded" in seen["text"] and "onerror" in seen["text"], seen["text"]
            else:
                assert HONEST_TEXT in seen["text"] and seen["pngs"] == 1, (student, seen)
        # tom's feedback again, from formgrader's button after a TA's look took the flag off: now with the
        # report's comment on his answer.
        with Gradebook(db_url) as gb:
            gb.find_submission_notebook(MINI, MINI, "tom").flagged = False
            gb.db.commit()
        page = context.new_page()
        _rows(page, f"{base}/formgrader/manage_submissions/{MINI}", "student-id", ["status"], len(ids))
        formgrader_artifacts.mkdir(parents=True, exist_ok=True)
        assert "Successfully generated feedback" in _button(page, "tom", "generate-feedback", "success-modal")
        page.close()
        for student in ("ana", "tom"):
            feedback = ClassDir(class_dir).feedback(student, MINI) / f"{MINI}.html"
            assert feedback.is_file(), run.report
            relative = feedback.relative_to(class_dir)
            for how, url in (("file", feedback.as_uri()), ("served", f"{base}/files/{relative}?token={TOKEN}")):
                seen, dialogs, requests = _look(context, url, f"feedback-{student}-{how}")
                _inert(seen, dialogs, requests, f"feedback {how}, {student}")
                assert HONEST_TEXT in seen["text"] and seen["pngs"] == 1, (student, how, seen)
        assert "onerror" in seen["text"]        # tom's comment, shown as text in his feedback
