"""Interactive explorers for the notebooks (ipywidgets).

Each explorer has a plain-text core (`*_table`) that a cell can print, so that the
notebook shows the same thing without a live widget (nbval, feedback HTML).
"""

import torch


def interactive(children, summary: str):
    """An ipywidgets VBox of `children` whose plain-text form is `summary`.

    Where widgets cannot run (a notebook viewed on GitHub or nbviewer, a terminal) the stored output
    is that text, a sentence saying what the cell offers, instead of a `VBox(children=(...))` dump.
    Where they run (JupyterLab, Colab), the widget shows as usual: text/plain is its last resort.
    """
    import ipywidgets as widgets

    class Interactive(widgets.VBox):
        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs)
            if isinstance(data, dict):
                data["text/plain"] = summary
            return data

    return Interactive(children)


def _parse_shape(text: str) -> tuple[int, ...]:
    """'3, 1' or '(3, 1)' or '' -> (3, 1) / ()."""
    cleaned = text.strip().strip("()[]").replace(" ", "")
    if not cleaned:
        return ()
    return tuple(int(part) for part in cleaned.split(",") if part)


def broadcast_table(shape_a, shape_b) -> str:
    """The two shapes right-aligned as broadcasting reads them, and what PyTorch makes of them."""
    a, b = tuple(shape_a), tuple(shape_b)
    width = max(len(a), len(b))
    pad_a, pad_b = (None,) * (width - len(a)) + a, (None,) * (width - len(b)) + b
    cell = lambda v: "  -" if v is None else f"{v:>3}"  # noqa: E731
    lines = [f"a      {' '.join(cell(v) for v in pad_a)}    {a}",
             f"b      {' '.join(cell(v) for v in pad_b)}    {b}"]
    try:
        result = tuple(torch.broadcast_shapes(a, b))
        lines.append(f"result {' '.join(cell(v) for v in result)}    {result}")
    except RuntimeError as exc:
        lines.append(f"result: not broadcastable ({str(exc).split('!')[0]})")
    return "\n".join(lines)


def broadcast_explorer(shape_a: str = "3, 1", shape_b: str = "1, 4"):
    """Two text boxes for shapes; shows the alignment and the result (or the refusal) as you type."""
    import html

    import ipywidgets as widgets

    box_a = widgets.Text(value=shape_a, description="shape a")
    box_b = widgets.Text(value=shape_b, description="shape b")
    # An HTML widget rather than an Output widget: its text lives in the widget's state, so
    # running the notebook headless (nbval, nbgrader) prints nothing extra.
    view = widgets.HTML()

    def show(_=None):
        try:
            text = broadcast_table(_parse_shape(box_a.value), _parse_shape(box_b.value))
        except ValueError:
            text = "type shapes as comma-separated integers, e.g. 8, 1, 6"
        view.value = f"<pre>{html.escape(text)}</pre>"

    box_a.observe(show, names="value")
    box_b.observe(show, names="value")
    show()
    return interactive([widgets.HBox([box_a, box_b]), view],
                       "[interactive: two boxes for shapes and their broadcast; run the notebook to use it]")
