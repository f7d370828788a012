"""The class report's pictures, drawn with matplotlib into PNG bytes (no file, no display).

Only numbers and the course's own names (assignments, exercises) reach a figure: nothing a
student wrote, so matplotlib's mathtext cannot be fed a submission's text.
"""

from __future__ import annotations

import io

from course.grading.class_report.stats import AssignmentStats

FULL, PARTIAL, NONE = "#2e7d32", "#f9a825", "#c62828"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")       # no display on a grading server
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()


def score_histogram(a: AssignmentStats) -> bytes:
    """How many students reached each total, with the mean and median marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 2.8))
    # A bar per whole point stands on its score (the bin [3, 4) holds the 3s); wider bins on their middle.
    per_point = all(high - low == 1 for low, high, _ in a.histogram)
    xs = [low if per_point else (low + high) / 2 for low, high, _ in a.histogram]
    widths = [(high - low) * 0.8 for low, high, _ in a.histogram]
    ax.bar(xs, [count for _, _, count in a.histogram], width=widths, color="#5c7cfa")
    ax.axvline(a.mean, color="black", linestyle="--", linewidth=1, label=f"mean {a.mean:.1f}")
    ax.axvline(a.median, color="grey", linestyle=":", linewidth=1.5, label=f"median {a.median:.1f}")
    ax.set_xlabel(f"total score (of {a.max_score:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper center", frameon=False, ncols=2)
    ax.set_title(f"{a.name}: {a.n} submissions")
    return _png(fig)


def exercise_bars(a: AssignmentStats) -> bytes:
    """A bar per exercise, hardest on top: the shares with full, partial and no marks."""
    plt = _pyplot()
    names = [x.name for x in a.exercises][::-1]      # barh draws bottom-up
    rows = a.exercises[::-1]
    n = max(1, a.n)
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(names) + 1.2))
    left = [0.0] * len(rows)
    for label, color, counts in (("full", FULL, [x.full for x in rows]),
                                 ("partial", PARTIAL, [x.partial for x in rows]),
                                 ("none", NONE, [x.none for x in rows])):
        share = [100 * c / n for c in counts]
        ax.barh(names, share, left=left, color=color, label=label)
        left = [l + s for l, s in zip(left, share)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of students")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=3, frameon=False)
    return _png(fig)
