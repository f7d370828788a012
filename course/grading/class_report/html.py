"""The class report as one HTML page: `CLASS/report/index.html`, pictures inside, no network.

Everything the statistics carry from a submission (failing messages, student ids) is escaped
here, once, by `_e` (`course.grading.inert.html`, the course's one way to put a submission's text into a page);
the messages were already capped by `course.grading.class_report.stats.failing_message`. Figures are SVG documents (`figures`) embedded as data URIs, so
the file can be mailed or opened from a USB stick.
"""

from __future__ import annotations

import base64
import os
import statistics
import time
from pathlib import Path

from course.grading import inert
from course.grading.class_report.stats import (
    SLOWEST,
    AssignmentStats,
    CellStats,
    ExerciseStats,
    Stat,
    class_stats,
)

REPORT_DIR = "report"
PAGE_NAME = "index.html"
WEAK = 0.2      # below this a test separates strong from weak submissions poorly (Ebel's rule of thumb)

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 75em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.warn { background: #fff3cd; } .bad { background: #f8d7da; }
.msg { font-family: ui-monospace, monospace; font-size: .9em; overflow-wrap: anywhere; }
.note { color: #555; font-size: .9em; }
img { max-width: 100%; }
"""


def write_report(class_dir: Path, assignments: list[str], db_url: str | None = None) -> Path:
    """Write the page for `assignments` (those with graded submissions) and return its path; the gradebook at
    `db_url`, else the class folder's own."""
    class_dir = Path(class_dir)
    found, missing = class_stats(class_dir, assignments, db_url)
    path = class_dir / REPORT_DIR / PAGE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{PAGE_NAME}.tmp")
    tmp.write_text(page(class_dir.name, found, missing), encoding="utf-8")
    os.replace(tmp, path)        # a browser open on the old page never sees half of the new one
    return path


def _e(value) -> str:
    return inert.html(value)


def _num(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{x:.0f}"


def _td(value: float, text: str | None = None, css: str = "num", stat: str = "") -> str:
    """A numeric cell; data-value keeps the exact number for whoever checks the page."""
    attr = f' data-stat="{_e(stat)}"' if stat else ""
    return f'<td class="{css}"{attr} data-value="{value!r}">{_e(text if text is not None else _num(value))}</td>'


def page(title: str, found: list[AssignmentStats], missing: list[str]) -> str:
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             # No request may leave the page: only inline styles and data: images.
             "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
             "img-src data:; style-src 'unsafe-inline'\">",
             f"<title>Class report: {_e(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>Class report: {_e(title)}, what the class got wrong</h1>",
             f"<p class='note'>Written {_e(time.strftime('%Y-%m-%d %H:%M %Z'))} from the gradebook and the "
             "autograded notebooks. Every graded submission counts, broken ones (zero everywhere) included; "
             "a score typed in formgrader counts instead of the test's.</p>"]
    if found:
        parts.append("<p>" + " · ".join(f"<a href='#a-{_e(a.name)}'>{_e(a.name)}</a>" for a in found) + "</p>")
    if missing:
        parts.append(f"<p class='note'>No graded submissions: {_e(', '.join(missing))}.</p>")
    parts += [_assignment(a) for a in found]
    parts.append(_glossary())
    parts.append("</body></html>")
    return "\n".join(parts)


def _assignment(a: AssignmentStats) -> str:
    from course.grading.class_report.figures import exercise_bars, score_histogram

    return "\n".join([
        f"<section class='assignment' id='a-{_e(a.name)}' data-assignment='{_e(a.name)}'>",
        f"<h2>{_e(a.name)}</h2>",
        _summary(a),
        _img(score_histogram(a), f"Score distribution of {a.name}", "histogram"),
        "<h3>Exercises, hardest first</h3>",
        _img(exercise_bars(a), f"Full, partial and no marks per exercise of {a.name}", "exercises"),
        _exercise_table(a.exercises),
        "<h3>Test cells: do they separate strong from weak submissions?</h3>",
        _cell_table(a.cells),
        "<h3>Grading time</h3>",
        _times(a),
        "</section>"])


def _img(svg: bytes, alt: str, kind: str) -> str:
    data = base64.b64encode(svg).decode()
    return f"<img class='figure' data-figure='{_e(kind)}' alt='{_e(alt)}' src='data:image/svg+xml;base64,{data}'>"


def _summary(a: AssignmentStats) -> str:
    rows = [("submissions", a.n, "n", "0"), ("points possible", a.max_score, "max", None),
            ("mean", a.mean, "mean", None), ("median", a.median, "median", None),
            ("scored zero", a.zeros, "zeros", "0"), ("flagged in the gradebook", a.flagged, "flagged", "0"),
            ("of which tampering", a.tampering, "tampering", "0"),
            ("broke (not a notebook, kernel died, time limit)", a.broken, "broken", "0")]
    body = "".join(f"<tr><th>{_e(label)}</th>{_td(v, _num(v, 0) if d == '0' else None, stat=s)}</tr>"
                   for label, v, s, d in rows)
    return f"<table class='summary'>{body}</table>"


def _exercise_table(exercises: list[ExerciseStats]) -> str:
    head = ("<tr><th>exercise</th><th>points</th><th>full</th><th>partial</th><th>none</th>"
            "<th>mean</th><th>not answered</th><th>most common failing messages (students; test cells)</th></tr>")
    rows = []
    for x in exercises:
        n = x.full + x.partial + x.none
        pct = lambda k: f"{k} ({100 * k / n:.0f}%)" if n else str(k)
        messages = "".join(f"<li data-count='{c}'><span class='msg'>{_e(m)}</span> × {c} "
                           f"<span class='note'>({_e(', '.join(tests))})</span></li>" for m, c, tests in x.messages)
        rows.append(f"<tr data-exercise='{_e(x.name)}'><th>{_e(x.name)}</th>{_td(x.max_score)}"
                    f"{_td(x.full, pct(x.full), stat='full')}{_td(x.partial, pct(x.partial), stat='partial')}"
                    f"{_td(x.none, pct(x.none), stat='none')}"
                    f"{_td(x.mean_fraction, f'{100 * x.mean_fraction:.0f}%', stat='mean')}"
                    f"{_td(x.unanswered, pct(x.unanswered), stat='unanswered')}"
                    f"<td>{_by_hand(x)}{f'<ul>{messages}</ul>' if messages else '' if x.waiting else '—'}</td></tr>")
    return f"<table class='exercises'>{head}{''.join(rows)}</table>"


def _by_hand(x: ExerciseStats) -> str:
    """An answer a TA grades: until then it scores nothing, which is not the student's doing."""
    if not x.waiting:
        return ""
    return (f"<span class='warn' data-stat='waiting' data-value='{x.waiting}'>graded by hand: {x.waiting} "
            "still to grade in formgrader (they count as none until then)</span>")


def _stat_cell(s: Stat, stat: str) -> str:
    if s.value is None:
        return f"<td class='num warn' data-stat='{stat}' title='{_e(s.note)}'>—</td>"
    css = "num bad" if s.value < 0 else "num warn" if s.value < WEAK else "num"
    return _td(s.value, f"{s.value:+.2f}", css, stat)


def _cell_table(cells: list[CellStats]) -> str:
    head = ("<tr><th>test cell</th><th>exercise</th><th>points</th><th>passed</th>"
            "<th>point-biserial r</th><th>discrimination D</th><th>note</th></tr>")
    rows = []
    for c in cells:
        note = c.r.note or c.d.note or _judge(c)
        rows.append(f"<tr data-cell='{_e(c.cell.name)}'><th>{_e(c.cell.name)}</th><td>{_e(c.cell.exercise)}</td>"
                    f"{_td(c.cell.max_score)}{_td(c.passed, f'{100 * c.passed:.0f}%', stat='passed')}"
                    f"{_stat_cell(c.r, 'r')}{_stat_cell(c.d, 'd')}<td class='note'>{_e(note)}</td></tr>")
    return f"<table class='cells'>{head}{''.join(rows)}</table>"


def _judge(c: CellStats) -> str:
    values = [s.value for s in (c.r, c.d) if s.value is not None]
    if any(v < 0 for v in values):
        return "weaker submissions pass it more often than stronger ones: check the test"
    if any(v < WEAK for v in values):
        return "separates strong from weak submissions poorly"
    return ""


def _times(a: AssignmentStats) -> str:
    if not a.seconds:
        return "<p class='note'>No grading times recorded (graded before `course grade` recorded them).</p>"
    values = sorted(a.seconds.values())
    mean, median = statistics.fmean(values), statistics.median(values)
    summary = (f"<table class='times'><tr><th>per submission</th><th>mean</th><th>median</th><th>slowest</th></tr>"
               f"<tr><td>{len(values)} timed</td>{_td(mean, f'{mean:.1f} s', stat='seconds-mean')}"
               f"{_td(median, f'{median:.1f} s', stat='seconds-median')}"
               f"{_td(values[-1], f'{values[-1]:.1f} s', stat='seconds-max')}</tr></table>")
    slow = sorted(a.seconds.items(), key=lambda kv: (-kv[1], kv[0]))[:SLOWEST]
    rows = "".join(f"<tr><td>{_e(s)}</td>{_td(t, f'{t:.1f} s')}</tr>" for s, t in slow)
    return summary + f"<table class='slowest'><tr><th>slowest submissions</th><th>seconds</th></tr>{rows}</table>"


def _glossary() -> str:
    return """<h2>How to read it</h2><ul class='note'>
<li><b>full / partial / none</b>: students with all, some or none of an exercise's points (its test cells together).
Exercises are ordered by the mean share of their points, lowest first.</li>
<li><b>failing messages</b>: the exception type and first line a failing test cell showed, grouped; each student
counts once per message. They come from the student's code: shown as text, cut at 200 characters.
<b>not answered</b>: students whose failing tests of the exercise all met the released stub (its
NotImplementedError); their message is not listed.</li>
<li><b>point-biserial r</b>: the correlation between passing the cell and the student's total on the
<i>other</i> cells. <b>D</b>: the share passing among the top 27% of students by total minus that among the bottom
27% (ties broken by student id). Both run from -1 to 1; below 0.2 a test separates poorly, below 0 stronger students
fail it more often (a test to check). A cell everyone or nobody passes has neither: it shows —, with the reason.</li>
<li><b>grading time</b>: per submission, as `course grade` recorded it (kernel start and feedback included).</li>
</ul>"""


def write_after_grading(class_dir: Path, assignments: list[str], say=print, db_url: str | None = None) -> Path | None:
    """`write_report` at the end of `course grade`: grades are committed by then, so a report
    that fails says why and lets the run end as it would have (None)."""
    try:
        return write_report(class_dir, assignments, db_url)
    except Exception as error:  # noqa: BLE001 - the page is a reading aid; the grades stand
        say(inert.terminal(f"class report not written ({type(error).__name__}: {error}); `course report` tries again"))
        return None
