"""The class report of a demo class, opened in a real (headless) Chromium.

`course demo` runs on a small class (the first assignment; the reference, untouched,
wrong-and-cheating and not-JSON submissions: tests/demo_class.py, graded once for this file and
test_formgrader_browser.py) and must end by naming the page; the page must
load with no request leaving it, show its figures, and show the numbers the gradebook holds
(computed here from nbgrader's API, not by the report's code), its exercises ordered from the
hardest with their failing messages. `course report` then writes it again on demand.
Screenshot in test-artifacts/class-report/.
"""

import statistics

import pytest
from demo_class import ASSIGNMENT, copy_of, graded_demo
from nbgrader.api import Gradebook

from course.notebook.cells import exercise_of
from course.cli import main as course_main
from e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, COURSE, ROOT

ARTIFACTS = ROOT / "test-artifacts" / "class-report"

# One group with test_formgrader_browser.py: the demo class is graded once for both.
pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.e2e, pytest.mark.xdist_group("demo-class")]

# What the page shows, as {section: {row key: {stat: data-value}}} and the figures' state.
READ_JS = """() => {
  const sec = document.querySelector('section.assignment');
  const stats = el => Object.fromEntries([...el.querySelectorAll('[data-stat]')]
      .map(td => [td.dataset.stat, td.dataset.value === undefined ? null : Number(td.dataset.value)]));
  return {
    summary: stats(sec.querySelector('table.summary')),
    exercises: [...sec.querySelectorAll('table.exercises tr[data-exercise]')]
        .map(tr => ({name: tr.dataset.exercise, ...stats(tr),
                     messages: [...tr.querySelectorAll('li')].map(li => [li.textContent, Number(li.dataset.count)])})),
    cells: Object.fromEntries([...sec.querySelectorAll('table.cells tr[data-cell]')]
        .map(tr => [tr.dataset.cell, stats(tr)])),
    figures: [...sec.querySelectorAll('img.figure')].map(img => ({
        kind: img.dataset.figure, loaded: img.complete && img.naturalWidth > 100 && img.naturalHeight > 100,
        inline: img.src.startsWith('data:image/svg+xml;base64,')})),
  };
}"""


@pytest.fixture
def demo_report():
    """`course demo` on a small class: (its folder, what it said)."""
    demo = graded_demo()
    return demo.folder, demo.said


def _from_gradebook(folder):
    """The numbers the page must show, straight from nbgrader's API."""
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        nb = gb.find_assignment(ASSIGNMENT).notebooks[0]
        answers = [c.name for c in nb.solution_cells]
        graded = {c.name: c.max_score for c in nb.grade_cells}     # tests, and answers a TA grades by hand
        tests = {name: points for name, points in graded.items() if name not in answers}
        subs = gb.assignment_submissions(ASSIGNMENT)
        totals = [s.score for s in subs]
        cells = [{g.name: g.score or 0 for n in s.notebooks for g in n.grades} for s in subs]
        flagged = sum(any(n.flagged for n in s.notebooks) for s in subs)
    exercises = {}
    for name, points in graded.items():
        exercises.setdefault(name if name in answers else exercise_of(name, answers), []).append((name, points))
    mean_share = {e: statistics.fmean(sum(c[t] for t, _ in ts) / sum(p for _, p in ts) for c in cells)
                  for e, ts in exercises.items()}
    passed = {t: sum(c[t] >= p for c in cells) / len(cells) for t, p in tests.items()}
    return {"n": len(totals), "mean": statistics.fmean(totals), "median": statistics.median(totals),
            "zeros": sum(t == 0 for t in totals), "flagged": flagged}, mean_share, passed


def test_demo_names_the_report_and_its_page_shows_the_gradebook(demo_report):
    folder, said = demo_report
    index = folder / "report" / "index.html"
    assert said[-1].endswith(str(index)) and "open it in a browser" in said[-1], said[-3:]
    summary, mean_share, passed = _from_gradebook(folder)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.as_uri(), wait_until="load")
            shown = page.evaluate(READ_JS)
            page.screenshot(path=str(ARTIFACTS / "index.png"), full_page=True)
        finally:
            browser.close()

    # Self-contained: the page itself and its inline images, nothing else.
    assert [u for u in requests if not u.startswith(("data:", index.as_uri()))] == []
    assert [(f["kind"], f["loaded"], f["inline"]) for f in shown["figures"]] == \
        [("histogram", True, True), ("exercises", True, True)]

    # The summary is the gradebook's.
    for stat, value in summary.items():
        assert shown["summary"][stat] == pytest.approx(value), stat

    # Every exercise, hardest first, with the gradebook's shares; failing messages with counts.
    rows = shown["exercises"]
    assert {r["name"] for r in rows} == set(mean_share)
    assert [r["mean"] for r in rows] == pytest.approx([mean_share[r["name"]] for r in rows])
    assert [r["mean"] for r in rows] == sorted(r["mean"] for r in rows)
    assert rows[0]["mean"] < 1 and any(r["messages"] for r in rows), rows
    assert all(f" × {c} " in m and 1 <= c <= summary["n"] for r in rows for m, c in r["messages"])
    assert all(r["unanswered"] >= 1 for r in rows), rows             # cy handed in the release untouched
    for name, share in passed.items():
        assert shown["cells"][name]["passed"] == pytest.approx(share), name


def test_course_report_writes_it_again_on_demand(demo_report, capsys, tmp_path):
    folder = copy_of(graded_demo(), tmp_path / "demo")
    index = folder / "report" / "index.html"
    index.unlink()
    code = course_main(["--root", str(COURSE.root), "report", "--class-dir", str(folder), ASSIGNMENT])
    assert code == 0
    assert capsys.readouterr().out.strip() == f"course report: {index}"
    assert f"id='a-{ASSIGNMENT}'" in index.read_text()
