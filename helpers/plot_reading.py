"""Reading a matplotlib figure as data, and judging a plot of a training history from that data.

A test of a plotting exercise never holds the student's Figure: under `course grade` the test runs in a
process of its own and only data crosses (see helpers/notebook_state.py). So the figure is read where it
was drawn, into plain lists, numbers and strings, and the test judges those:

    facts = plot_facts(plot_history, history)   # runs plot_history(history) where it lives, reads its figure
    check_loss_plot(facts, history, "plot_history(...)")

A figure the notebook kept (notebook 02's `my_figure`, drawn from the student's own run) is read the same way,
where it is: `check_own_history_plot(figure_facts(my_figure), my_history, "my_figure")`.

`read_figure(fig)` is the reading itself: for every axes, its labels, title, scales and x range, its legend
texts, and every artist that can draw a curve or mark an epoch (lines with their data and label, scatter
points and vertical segments, spans, texts and annotations), with their x and y values in data units.
"""

from __future__ import annotations

import math

from helpers.checks import _failure, check_equal
from helpers.notebook_state import asks_notebook


# -- reading (runs where the figure is: the student's kernel) -----------------------------------------------

def _numbers(values) -> list[float]:
    """`values` as a flat list of floats; [] for data that are not numbers (dates, strings, masked...)."""
    import numpy as np

    try:
        array = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return []
    return [float(v) for v in array.tolist()]


def _colour(artist) -> str:
    from matplotlib.colors import to_hex

    try:
        colour = artist.get_color()
        return to_hex(colour if not hasattr(colour, "ndim") or colour.ndim == 1 else colour[0])
    except (AttributeError, ValueError, TypeError, IndexError):
        return ""


def _line(line) -> dict:
    import numpy as np

    x, y = _numbers(line.get_xdata()), _numbers(line.get_ydata())
    every = line.get_markevery()
    marked = None
    if every is not None and line.get_marker() not in (None, "", "None", " ", "none") and x:
        try:
            marked = [int(i) for i in np.arange(len(x))[every if not isinstance(every, (int, np.integer))
                                                        else slice(None, None, int(every))]]
        except (TypeError, ValueError, IndexError):
            marked = None
    return {"label": str(line.get_label()), "x": x, "y": y, "colour": _colour(line), "marked": marked}


def _collection(collection) -> dict:
    import numpy as np

    points = []
    try:
        offsets = np.asarray(collection.get_offsets(), dtype=float).reshape(-1, 2)
        points = [[float(a), float(b)] for a, b in offsets.tolist()]
    except (TypeError, ValueError):
        pass
    segments = []
    for segment in getattr(collection, "get_segments", lambda: [])():
        try:
            segments.append([[float(a), float(b)] for a, b in np.asarray(segment, dtype=float).reshape(-1, 2).tolist()])
        except (TypeError, ValueError):
            continue
    return {"label": str(collection.get_label()), "points": points, "segments": segments}


def _span(patch) -> list[float] | None:
    try:
        xs = patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]
        return [float(xs.min()), float(xs.max())]
    except (AttributeError, ValueError, IndexError):
        return None


def _legend(legend) -> list[list[str]]:
    """[[text, colour of its handle], ...] of a legend (or [] for none)."""
    if legend is None:
        return []
    handles = getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])
    texts = [t.get_text() for t in legend.get_texts()]
    colours = [_colour(h) for h in handles] + [""] * len(texts)
    return [[text, colour] for text, colour in zip(texts, colours)]


def _text_x(text) -> float | None:
    where = getattr(text, "xy", None)
    if where is None:
        where = text.get_position()
    try:
        return float(where[0])
    except (TypeError, ValueError, IndexError):
        return None


def read_figure(fig) -> dict:
    """What `fig` shows, as plain data (see the module docstring)."""
    axes = []
    for ax in fig.axes:
        axes.append({
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "title": ax.get_title(),
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(), "xlim": [float(v) for v in ax.get_xlim()],
            "legend": _legend(ax.get_legend()),
            "lines": [_line(line) for line in ax.get_lines()],
            "collections": [_collection(c) for c in ax.collections],
            "spans": [s for s in (_span(p) for p in ax.patches) if s is not None],
            "texts": [x for x in (_text_x(t) for t in ax.texts) if x is not None],
        })

    def sup(name):
        text = getattr(fig, name, None)
        return text.get_text() if text is not None else ""

    return {"returned": "Figure", "axes": axes, "legends": [_legend(legend) for legend in fig.legends],
            "suptitle": sup("_suptitle"), "supxlabel": sup("_supxlabel"), "supylabel": sup("_supylabel")}


def _figure_of(result):
    """The Figure a plotting function handed back: the Figure itself, or the figure of an Axes."""
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if isinstance(result, Figure):
        return result
    if isinstance(result, Axes):
        return result.figure
    return None


@asks_notebook
def plot_facts(plot, *args) -> dict:
    """`plot(*args)` run where it lives, and the Figure (or Axes) it returns read as data (`read_figure`), then
    closed. When it returns anything else: {"returned": its type's name}."""
    import matplotlib.pyplot as plt

    result = plot(*args)
    fig = _figure_of(result)
    if fig is None:
        return {"returned": "None" if result is None else "something else"}
    try:
        return read_figure(fig)
    finally:
        plt.close(fig)


@asks_notebook
def figure_facts(figure) -> dict:
    """A Figure (or Axes) the notebook kept, read as data where it lives (`read_figure`); it stays open. For
    anything else: {"returned": its type's name}."""
    fig = _figure_of(figure)
    if fig is None:
        return {"returned": "None" if figure is None else "something else"}
    return read_figure(fig)


# -- judging (runs in the test: data only) -------------------------------------------------------------------

def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _all_close(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_close(u, v) for u, v in zip(a, b))


def _series(ax: dict):
    """(label, x, y, colour, artist) for every line and scatter of an axes that could be a curve."""
    for line in ax["lines"]:
        yield line["label"], line["x"], line["y"], line["colour"], line
    for collection in ax["collections"]:
        points = collection["points"]
        if points:
            yield (collection["label"], [p[0] for p in points], [p[1] for p in points], "", collection)


def _find_curve(facts: dict, values: list[float], key: str, what: str, name: str = "history"):
    """(axes index, artist, epoch offset) of the curve of `values` against the epochs, or a failure naming why not."""
    n = len(values)
    shorter = wrong_x = None
    for index, ax in enumerate(facts["axes"]):
        for _label, x, y, _colour, artist in _series(ax):
            if _all_close(y, values):
                for offset in (0, 1):
                    if _all_close(x, [float(e + offset) for e in range(n)]):
                        return index, artist, offset
                wrong_x = x
            elif 0 < len(y) < n and _all_close(y, values[:len(y)]):
                shorter = len(y)
    if wrong_x is not None:
        raise _failure(f"{what}: the x values of the line of {name}['{key}']",
                       f"the epochs 0, 1, ..., {n - 1} (or 1, ..., {n})", _preview(wrong_x))
    if shorter is not None:
        raise _failure(what, f"a line of all {n} values of {name}['{key}'], past the best epoch",
                       f"a line of only its first {shorter}")
    raise _failure(what, f"a line of {name}['{key}'] against the epochs", "no line with those values")


def _preview(values: list[float]) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:8])
    return f"[{shown}, ...]" if len(values) > 8 else f"[{shown}]"


def _words(facts: dict, index: int) -> list[str]:
    """The legend texts that can name a curve of axes `index`: its own legend's and the figure's."""
    own = facts["axes"][index]["legend"]
    return [text.lower() for text, _ in own + [entry for legend in facts["legends"] for entry in legend]]


def _named(facts: dict, curve, word: str, separate: bool) -> bool:
    """Whether the legend names this curve with `word`: the entries drawn in the curve's colour decide (a legend
    that calls the training curve "val loss" names it wrongly, whatever its other entries say); where no entry
    has its colour (a handle whose colour cannot be read), the curve's label or any entry of its legends."""
    index, artist, _ = curve
    ax = facts["axes"][index]
    entries = ax["legend"] + [entry for legend in facts["legends"] for entry in legend]
    colour = artist.get("colour", "")
    drawn_alike = [text.lower() for text, handle_colour in entries if colour and handle_colour == colour]
    if drawn_alike:
        return any(word in text for text in drawn_alike)
    legend = _words(facts, index)
    label = artist["label"].lower()
    if legend and (word in label and not label.startswith("_") or any(word in text for text in legend)):
        return True
    return separate and (word in ax["title"].lower() or word in ax["ylabel"].lower())


def _mark_epochs(facts: dict, curves, best: float, losses: tuple[float, ...]) -> tuple[bool, list[float]]:
    """Whether an artist other than the curves marks epoch `best` (a point there: at one of `losses`); and the
    epochs that other marks point at."""
    elsewhere = []
    for ax in facts["axes"]:
        artists = [line for line in ax["lines"]] + [c for c in ax["collections"]]
        for artist in artists:
            if any(artist is c[1] for c in curves):
                continue
            if "x" in artist:
                groups = [list(zip(artist["x"], artist["y"]))]
            elif artist["segments"]:
                groups = [[tuple(p) for p in segment] for segment in artist["segments"]]   # vlines: each its own
            else:
                groups = [[tuple(p)] for p in artist["points"]]                          # scatter: each point
            for points in groups:
                if not points or len({round(x, 9) for x, _ in points}) != 1:
                    continue                                # not one epoch: another curve, a horizontal line
                x = points[0][0]
                vertical = len({round(y, 9) for _, y in points}) > 1
                if _close(x, best) and (vertical or any(_close(points[0][1], loss) for loss in losses)):
                    return True, []
                elsewhere.append(x)
        for lo, hi in ax["spans"]:
            if lo - 1e-9 <= best <= hi + 1e-9 and hi - lo <= 1.0 + 1e-9:
                return True, []
            elsewhere.append((lo + hi) / 2)
        for x in ax["texts"]:
            if _close(x, best):
                return True, []
            elsewhere.append(x)
    validation = curves[1][1]
    marked = validation.get("marked")
    if marked is not None and len(marked) == 1 and _close(validation["x"][marked[0]], best):
        return True, []
    return False, elsewhere


def check_loss_plot(facts: dict, history: dict, what: str, name: str = "history") -> None:
    """The figure read as `facts` (`plot_facts`, `read_figure`) plots a training history:

    - `history["train_loss"]` and `history["val_loss"]` as two curves (lines or points, on one axes or two, any
      order, colour, marker or scale) against the epochs 0..n-1 (or 1..n), every epoch shown, past the best;
    - each curve named: a legend text with "train" / "val" (or, on axes of their own, a title or y label);
    - an x label with "epoch", and "loss" said somewhere (a y label, a title or the legend);
    - `history["best_epoch"]` marked: a vertical line, span (at most one epoch wide), point, marker, text or
      annotation at that epoch (a point at its validation loss), on the same numbering as the curves.
    """
    __tracebackhide__ = True
    returned = facts.get("returned") if type(facts) is dict else None
    if returned != "Figure":
        raise _failure(f"{what} (return the Figure: fig, ax = plt.subplots() ... return fig)", "a matplotlib Figure",
                       returned or "something else")
    if not facts["axes"]:
        raise _failure(what, "a figure with an axes", "a figure without axes")
    train, val = [float(v) for v in history["train_loss"]], [float(v) for v in history["val_loss"]]
    curves = [_find_curve(facts, train, "train_loss", what, name), _find_curve(facts, val, "val_loss", what, name)]
    if curves[0][2] != curves[1][2]:
        raise _failure(what, "both curves on the same epoch numbering", "one from 0, the other from 1")
    offset = curves[0][2]
    separate = curves[0][0] != curves[1][0]
    for curve, (word, key) in zip(curves, (("train", "train_loss"), ("val", "val_loss"))):
        if not _named(facts, curve, word, separate):
            raise _failure(what, f"the curve of {name}['{key}'] named in a legend with a text containing '{word}' "
                                 f"(ax.plot(..., label='{word}...'), then ax.legend())",
                           f"label {curve[1]['label']!r}, legend texts {_words(facts, curve[0])}")
    holding = [facts["axes"][i] for i in {curves[0][0], curves[1][0]}]
    check_equal(any("epoch" in ax["xlabel"].lower() for ax in holding) or "epoch" in facts["supxlabel"].lower(),
                True, f"{what}: an x-axis label that mentions 'epoch' (got {[ax['xlabel'] for ax in holding]})")
    says_loss = [ax["ylabel"] for ax in holding] + [ax["title"] for ax in holding] + [facts["suptitle"],
                                                                                    facts["supylabel"]]
    says_loss += [text for i in {curves[0][0], curves[1][0]} for text in _words(facts, i)]
    check_equal(any("loss" in text.lower() for text in says_loss), True,
                f"{what}: 'loss' in the y-axis label, a title or the legend")
    first, last = float(offset), float(len(train) - 1 + offset)
    for ax in holding:
        lo, hi = min(ax["xlim"]), max(ax["xlim"])
        if lo > first + 1e-9 or hi < last - 1e-9:
            raise _failure(f"{what}: the x range shown", f"every epoch, {first:g} to {last:g} (past the best)",
                           f"{lo:g} to {hi:g} (ax.set_xlim cuts the curves)")
    best = int(history["best_epoch"])
    found, elsewhere = _mark_epochs(facts, curves, float(best + offset), (val[best], train[best]))
    if not found:
        where = f" (the marks found are at x = {sorted({round(x, 3) for x in elsewhere})})" if elsewhere else ""
        raise _failure(what, f"a mark at the best epoch {best + offset} (ax.axvline({best + offset}) or a marker at "
                             f"that epoch's validation loss)", f"no mark there{where}")


def check_own_history_plot(facts: dict, history: dict, what: str, name: str = "my_history") -> None:
    """The figure read as `facts` (`figure_facts` of a kept Figure) plots `history`, a run's own history, past its
    best epoch: the run goes on after its lowest validation loss (a run stopped at its best epoch shows no rise),
    and the figure passes `check_loss_plot` for that history, the best epoch being the first lowest validation
    loss (whatever `history["best_epoch"]` says). Every way of drawing `check_loss_plot` accepts is accepted."""
    __tracebackhide__ = True
    returned = facts.get("returned") if type(facts) is dict else None
    if returned != "Figure":
        raise _failure(f"{what} (keep the Figure your plot_history returns: {what} = plot_history({name}))",
                       "a matplotlib Figure", returned or "something else")
    train, val = [float(v) for v in history["train_loss"]], [float(v) for v in history["val_loss"]]
    if not val:
        raise _failure(f"{what}: {name}", "the history of your fit's run", "no epochs")
    best = val.index(min(val))
    if best == len(val) - 1:
        raise _failure(f"{what}: {name}['val_loss']", "a run past its best epoch (epochs after the lowest validation "
                       "loss, where it rises)", f"{len(val)} epochs, the last of them the best: the run stops at its "
                       "best epoch")
    drawn = [y for ax in facts["axes"] for _label, _x, y, _colour, _artist in _series(ax)]
    if not any(0 < len(y) <= len(val) and _all_close(y, val[:len(y)]) for y in drawn):
        raise _failure(what, f"a plot of {name} (your fit's run: a line of its {len(val)} validation losses)",
                       "no line of its values: a plot of another history")
    check_loss_plot(facts, {"train_loss": train, "val_loss": val, "best_epoch": best}, what, name)
