"""Formgrader, used as a TA would, in a real (headless) Chromium, on a demo class graded by `course grade`.

A small demo class (one assignment; a complete, an untouched, a cheating and a not-JSON submission)
is made and graded by `course demo` (tests/demo_class.py: once for this file and
test_class_report_browser.py; this test works on a copy), and JupyterLab is started in it as the
README says. Formgrader must list every assignment and student with the grader's scores and names,
flag what the report names with its reason, keep a score entered by hand through a forced regrade,
and its Generate Feedback button must write feedback without hidden tests (and hold back a flagged
notebook's). Screenshots in test-artifacts/formgrader/.
"""

import json

import pytest
from nbgrader.api import Gradebook

from demo_class import ASSIGNMENT, STUDENTS, copy_of, graded_demo

from course.grading import gradebooks
from course.tools.demo import DEMO_CELL_TIMEOUT, ROSTER
from course.notebook.cells import hidden_lines
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.grading.sandbox.policy import Limits
from e2e.test_browser import COURSE, ROOT, TOKEN, jupyter_lab

ARTIFACTS = ROOT / "test-artifacts" / "formgrader"

# One group with test_class_report_browser.py: the demo class is graded once for both.
pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.e2e, pytest.mark.xdist_group("demo-class")]

# Every row of a formgrader table, as {student id: {column class: text}}.
ROWS_JS = """([idColumn, columns]) => Object.fromEntries([...document.querySelectorAll('#main-table tr')]
    .map(r => [r.querySelector('.' + idColumn)?.textContent.trim(),
               Object.fromEntries(columns.map(c => [c, (r.querySelector('.' + c)?.textContent || '').trim()]))]))"""


def _grade(folder, force=False):
    options = GradeOptions(jobs=2, force=force, limits=Limits(cell_timeout=DEMO_CELL_TIMEOUT))
    return grade(COURSE, folder, [ASSIGNMENT], options, say=lambda *args, **kwargs: None)


def _score(value: tuple[float, float]) -> str:
    return f"{value[0]:g} / {value[1]:g}"


def _rows(page, url: str, id_column: str, columns: list[str], expected: int) -> dict:
    page.goto(url)
    page.wait_for_function(f"() => document.querySelectorAll('#main-table tr .{columns[0]}').length >= "
                           f"{expected} && ![...document.querySelectorAll('#main-table tr')]"
                           f".some(r => r.textContent.includes('Please wait'))", timeout=60_000)
    return page.evaluate(ROWS_JS, [id_column, columns])


def _button(page, student: str, column: str, modal: str) -> str:
    """Click a per-student button of Manage Submissions; returns what its modal says."""
    page.click(f"#main-table tr:has(.student-id:text-is('{student}')) .{column} a")
    page.wait_for_selector(f"#{modal}", state="visible", timeout=240_000)
    page.wait_for_timeout(500)      # the modal's fade-in, for the screenshot
    said = page.inner_text(f"#{modal}")
    page.screenshot(path=str(ARTIFACTS / f"{column}-{student}.png"), full_page=False)
    page.click(f"#{modal} .modal-footer button >> nth=-1")
    page.wait_for_selector(f"#{modal}", state="detached", timeout=30_000)
    return said


@pytest.fixture
def demo_class(tmp_path):
    """A copy of the demo class as `course demo` graded it (roster imported), and what `course grade` found."""
    demo = graded_demo()
    return copy_of(demo, tmp_path / "class"), demo.run


def test_formgrader_shows_what_course_grade_found_and_its_buttons_are_safe(demo_class):
    folder, run = demo_class
    flagged = {student for student, _ in run.problems}
    assert "eve" in flagged and "ivy" in flagged and "ada" not in flagged, run.report
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    db_url = f"sqlite:///{folder / 'gradebook.db'}"
    with jupyter_lab(folder) as (browser, base):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/formgrader?token={TOKEN}")      # logs in; the pages below share the cookie

        # Every assignment, with its submissions.
        assignments = _rows(page, f"{base}/formgrader", "name", ["name", "num-submissions"], 1)
        page.screenshot(path=str(ARTIFACTS / "assignments.png"), full_page=False)
        assert assignments[ASSIGNMENT]["num-submissions"] == str(len(STUDENTS))

        # Every student, by name, with the grader's total.
        students = _rows(page, f"{base}/formgrader/manage_students", "id", ["name", "score"], len(STUDENTS))
        page.screenshot(path=str(ARTIFACTS / "students.png"), full_page=False)
        for student in STUDENTS:
            first, last = ROSTER[student]
            assert students[student]["name"] == f"{last}, {first}"
            assert students[student]["score"] == _score(run.scores[(student, ASSIGNMENT)])

        # Every submission graded, the broken one too, with the grader's score.
        submissions_url = f"{base}/formgrader/manage_submissions/{ASSIGNMENT}"
        submissions = _rows(page, submissions_url, "student-id", ["status", "score"], len(STUDENTS))
        page.screenshot(path=str(ARTIFACTS / "submissions.png"), full_page=False)
        for student in STUDENTS:
            assert submissions[student]["status"] in ("graded", "needs manual grading"), submissions
            assert submissions[student]["score"] == _score(run.scores[(student, ASSIGNMENT)])

        # Flagged exactly where the report names a problem; the reason in the comment box.
        notebook_url = f"{base}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}"
        page.goto(notebook_url)
        page.wait_for_selector("#main-table tr .flagged", timeout=60_000)
        page.click("#toggle_names")
        page.screenshot(path=str(ARTIFACTS / "notebook-submissions.png"), full_page=False)
        links = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#main-table tr')]
            .map(r => [r.querySelector('a.name-shown').textContent.trim(),
                       [r.querySelector('a.name-shown').href, !!r.querySelector('.flagged .glyphicon-flag')]]))""")
        for student in STUDENTS:
            first, last = ROSTER[student]
            assert links[f"{last}, {first}"][1] == (student in flagged), (student, links)
        page.goto(links["{1}, {0}".format(*ROSTER["eve"])][0])
        page.wait_for_function("() => formgrader.grades?.loaded && formgrader.comments?.loaded", timeout=60_000)
        placeholders = page.eval_on_selector_all("textarea.comment", "els => els.map(e => e.placeholder)")
        page.locator("textarea.comment").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "flagged-submission.png"), full_page=False)
        reasons = [p for p in placeholders if p.startswith(gradebooks.REPORT_COMMENT)]
        assert len(reasons) == 1 and "tampering" in reasons[0], placeholders

        # A score entered by hand (here, on the flagged notebook) survives `course grade --force`.
        grade_id = page.get_attribute("input.score >> nth=0", "id")
        with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"):
            page.fill("input.score >> nth=0", "1")
            page.keyboard.press("Tab")
        before = run.scores[("eve", ASSIGNMENT)][0]
        regraded = _grade(folder, force=True)
        with Gradebook(db_url) as gb:
            kept = gb.find_grade(grade_id, ASSIGNMENT, ASSIGNMENT, "eve")
            assert kept.manual_score == 1
            auto = kept.auto_score or 0
        assert regraded.scores[("eve", ASSIGNMENT)][0] == before - auto + 1
        submissions = _rows(page, submissions_url, "student-id", ["status", "score"], len(STUDENTS))
        assert submissions["eve"]["score"] == _score(regraded.scores[("eve", ASSIGNMENT)])

        # Generate Feedback: written without hidden tests; held back for a flagged notebook.
        feedback = folder / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html"
        feedback.unlink()
        said = _button(page, "ada", "generate-feedback", "success-modal")
        assert "Successfully generated feedback" in said
        page_html = feedback.read_text()
        source = COURSE.source_notebook(ASSIGNMENT).read_text()
        secrets = [line for cell in json.loads(source)["cells"] if cell["cell_type"] == "code"
                   for line in hidden_lines("".join(cell["source"]))]
        assert secrets and not [line for line in secrets if line in page_html]
        assert "BEGIN HIDDEN TESTS" not in page_html
        said = _button(page, "eve", "generate-feedback", "error-modal")
        assert "feedback held back" in said
        assert not (folder / "feedback" / "eve").exists()

        # Autograde: formgrader says to use `course grade`, for the file that is not JSON too.
        said = _button(page, "ivy", "autograde", "error-modal")
        assert f"course grade --class-dir {folder} {ASSIGNMENT}" in said and "NotJSONError" not in said
        page.close()
