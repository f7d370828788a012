"""The class report's pictures, written as SVG documents (bytes), by hand: a bar chart needs no plotting
library, and the grading process draws a class's figures in milliseconds instead of importing matplotlib
and rendering PNGs (about 2 s at the end of every `course grade`, while the other cores wait).

Only numbers and the course's own names (assignments, exercises) reach a figure, escaped: nothing a
student wrote. The page shows them as <img> data URIs, where an SVG runs no script.
"""

from __future__ import annotations

import math
from html import escape

from course.grading.class_report.stats import AssignmentStats

FULL, PARTIAL, NONE = "#2e7d32", "#f9a825", "#c62828"
BAR = "#5c7cfa"
FONT = "font-family='DejaVu Sans, Arial, sans-serif' font-size='12'"
CHAR = 7.0          # about how wide a character of FONT is, in px: room for the exercise names


def _svg(width: float, height: float, body: list[str]) -> bytes:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' {FONT}>"
            f"<rect width='100%' height='100%' fill='white'/>" + "".join(body) + "</svg>").encode()


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' {extra}>{escape(text)}</text>"


def _line(x1: float, y1: float, x2: float, y2: float, style: str = "stroke='black'") -> str:
    return f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' {style}/>"


def _ticks(high: float, most: int = 6) -> list[float]:
    """Round steps (1, 2, 5 times a power of ten) from 0 to at least `high`, at most about `most` of them."""
    step = 1.0
    for base in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        step = float(base)
        if high / step <= most:
            break
    return [i * step for i in range(int(math.ceil(high / step)) + 1)]


def score_histogram(a: AssignmentStats) -> bytes:
    """How many students reached each total, with the mean and median marked."""
    width, height, left, right, top, bottom = 672, 270, 56, 20, 52, 44
    # A bar per whole point stands on its score (the bin [3, 4) holds the 3s); wider bins on their middle.
    per_point = all(high - low == 1 for low, high, _ in a.histogram)
    centres = [low if per_point else (low + high) / 2 for low, high, _ in a.histogram]
    x_low = min([c - (high - low) / 2 for c, (low, high, _) in zip(centres, a.histogram)] + [a.mean, a.median, 0])
    x_high = max([c + (high - low) / 2 for c, (low, high, _) in zip(centres, a.histogram)] + [a.mean, a.median, 1])
    y_ticks = _ticks(max([count for _, _, count in a.histogram] + [1]))
    y_high = y_ticks[-1] or 1

    def x(value: float) -> float:
        return left + (value - x_low) / (x_high - x_low) * (width - left - right)

    def y(value: float) -> float:
        return height - bottom - value / y_high * (height - top - bottom)

    body = [_text(width / 2, 18, f"{a.name}: {a.n} submissions", extra="font-size='14'")]
    for c, (low, high, count) in zip(centres, a.histogram):
        half = (high - low) * 0.4
        if count:
            body.append(f"<rect x='{x(c - half):.1f}' y='{y(count):.1f}' width='{x(c + half) - x(c - half):.1f}' "
                        f"height='{y(0) - y(count):.1f}' fill='{BAR}'><title>{count} at {escape(f'{low:g}')}"
                        f"</title></rect>")
    body.append(_line(left, y(0), width - right, y(0)))
    body.append(_line(left, top, left, y(0)))
    for tick in y_ticks:
        body += [_line(left - 4, y(tick), left, y(tick)), _text(left - 7, y(tick) + 4, f"{tick:g}", "end")]
    for tick in _ticks(a.max_score, 10):
        if x_low <= tick <= x_high:
            body += [_line(x(tick), y(0), x(tick), y(0) + 4), _text(x(tick), y(0) + 17, f"{tick:g}")]
    for value, dash, colour, label, at in ((a.mean, "6 4", "black", f"mean {a.mean:.1f}", width / 2 - 90),
                                            (a.median, "2 3", "grey", f"median {a.median:.1f}", width / 2 + 30)):
        style = f"stroke='{colour}' stroke-dasharray='{dash}' stroke-width='1.5'"
        body += [_line(x(value), top, x(value), y(0), style), _line(at, 36, at + 24, 36, style),
                 _text(at + 30, 40, label, "start")]
    body.append(_text((left + width - right) / 2, height - 8, f"total score (of {a.max_score:g})"))
    body.append(_text(14, (top + y(0)) / 2, "students", extra=f"transform='rotate(-90 14 {(top + y(0)) / 2:.1f})'"))
    return _svg(width, height, body)


def exercise_bars(a: AssignmentStats) -> bytes:
    """A bar per exercise, hardest on top: the shares with full, partial and no marks."""
    rows = a.exercises
    n = max(1, a.n)
    left = 16 + CHAR * max([len(x.name) for x in rows] + [4])
    width, right, top, bar, gap, bottom = max(672, left + 320), 24, 40, 22, 8, 40
    height = top + len(rows) * (bar + gap) + bottom

    def x(percent: float) -> float:
        return left + percent / 100 * (width - left - right)

    body = []
    for i, (label, colour) in enumerate((("full", FULL), ("partial", PARTIAL), ("none", NONE))):
        at = width / 2 - 120 + i * 90
        body += [f"<rect x='{at:.1f}' y='12' width='14' height='14' fill='{colour}'/>",
                 _text(at + 20, 24, label, "start")]
    for i, row in enumerate(rows):
        top_of = top + i * (bar + gap)
        start = 0.0
        for count, colour, kind in ((row.full, FULL, "full"), (row.partial, PARTIAL, "partial"),
                                    (row.none, NONE, "none")):
            share = 100 * count / n
            if share:
                body.append(f"<rect x='{x(start):.1f}' y='{top_of:.1f}' width='{x(start + share) - x(start):.1f}' "
                            f"height='{bar}' fill='{colour}'><title>{escape(row.name)}: {count} {kind}</title></rect>")
            start += share
        body.append(_text(left - 8, top_of + bar / 2 + 4, row.name, "end"))
    axis = top + len(rows) * (bar + gap)
    body.append(_line(left, axis, width - right, axis))
    for tick in range(0, 101, 20):
        body += [_line(x(tick), axis, x(tick), axis + 4), _text(x(tick), axis + 17, str(tick))]
    body.append(_text((left + width - right) / 2, height - 6, "% of students"))
    return _svg(width, height, body)
