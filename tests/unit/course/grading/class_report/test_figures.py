"""course.grading.class_report.figures: the class report's SVG pictures, drawn by hand from the statistics."""

import xml.etree.ElementTree as ET

import pytest

from course.grading.class_report.figures import FULL, NONE, PARTIAL, _ticks, exercise_bars, score_histogram
from course.grading.class_report.stats import AssignmentStats, ExerciseStats, histogram

SVG = "{http://www.w3.org/2000/svg}"


def _stats(scores, max_score=4.0, exercises=()):
    ordered = sorted(scores)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return AssignmentStats(name="hw", n=len(scores), max_score=max_score, mean=sum(scores) / len(scores),
                           median=median, zeros=scores.count(0), flagged=0, tampering=0, broken=0,
                           histogram=histogram(scores, max_score), exercises=list(exercises), cells=[])


def _exercise(name, full, partial, none):
    return ExerciseStats(name=name, max_score=1.0, full=full, partial=partial, none=none, mean_fraction=0.5,
                         unanswered=0, messages=[])


def _parse(svg: bytes) -> ET.Element:
    root = ET.fromstring(svg)       # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg"
    return root


@pytest.mark.parametrize("high, most, expected", [
    (3, 6, [0, 1, 2, 3]),
    (7, 6, [0, 2, 4, 6, 8]),
    (12, 6, [0, 2, 4, 6, 8, 10, 12]),
    (13, 6, [0, 5, 10, 15]),
    (0, 6, [0]),
    (40, 10, [0, 5, 10, 15, 20, 25, 30, 35, 40]),
])
def test_ticks_are_round_steps_from_zero_to_at_least_the_top(high, most, expected):
    assert _ticks(high, most) == expected


def test_histogram_draws_a_bar_per_nonempty_bin_with_its_count():
    svg = _parse(score_histogram(_stats([0, 1, 1, 3, 4, 4, 4])))
    bars = [r for r in svg.iter(f"{SVG}rect") if r.get("fill") != "white"]
    titles = sorted(r.find(f"{SVG}title").text for r in bars)
    assert titles == ["1 at 0", "1 at 3", "2 at 1", "3 at 4"]       # no bar for the empty bin at 2
    heights = {r.find(f"{SVG}title").text: float(r.get("height")) for r in bars}
    assert heights["3 at 4"] == pytest.approx(3 * heights["1 at 0"])
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "hw: 7 submissions" in texts and "total score (of 4)" in texts
    assert any(t.startswith("mean 2.4") for t in texts) and "median 3.0" in texts


def test_exercise_bars_split_each_row_into_full_partial_and_none_shares():
    rows = [_exercise("hard", 1, 1, 2), _exercise("easy", 4, 0, 0)]
    svg = _parse(exercise_bars(_stats([1, 2, 3, 4], exercises=rows)))
    bars = [r for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    by_title = {r.find(f"{SVG}title").text: r for r in bars}
    assert set(by_title) == {"hard: 1 full", "hard: 1 partial", "hard: 2 none", "easy: 4 full"}
    assert by_title["hard: 1 full"].get("fill") == FULL
    assert by_title["hard: 1 partial"].get("fill") == PARTIAL
    assert by_title["hard: 2 none"].get("fill") == NONE
    width = {t: float(r.get("width")) for t, r in by_title.items()}
    # the shares of a row add up to the whole axis, the full row's one bar is as long
    assert width["hard: 1 full"] + width["hard: 1 partial"] + width["hard: 2 none"] == pytest.approx(
        width["easy: 4 full"], abs=0.3)
    assert width["hard: 2 none"] == pytest.approx(2 * width["hard: 1 full"], abs=0.2)
    # the rows are stacked in the order given, each on its own line
    assert float(by_title["hard: 1 full"].get("y")) < float(by_title["easy: 4 full"].get("y"))


def test_names_are_escaped_text_never_markup():
    hostile = "x<script>alert(1)</script>&"
    svg_bytes = exercise_bars(_stats([1], exercises=[_exercise(hostile, 1, 0, 0)]))
    assert b"<script>" not in svg_bytes
    svg = _parse(svg_bytes)
    assert hostile in [t.text for t in svg.iter(f"{SVG}text")]
    assert not list(svg.iter(f"{SVG}script"))


def test_long_exercise_names_widen_the_picture():
    short = _parse(exercise_bars(_stats([1], exercises=[_exercise("a", 1, 0, 0)])))
    long = _parse(exercise_bars(_stats([1], exercises=[_exercise("a" * 80, 1, 0, 0)])))
    assert float(short.get("width")) == 672
    assert float(long.get("width")) > 672
