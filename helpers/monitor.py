"""Watching a training run from a notebook: the validation loss, a progress bar over epochs, a slider
over epochs.

Both are made for notebooks that are also executed headless (nbval, nbgrader, `course build`):
nothing is printed per epoch, so a stored notebook keeps one short line or one widget per cell.

    for epoch in (bar := epoch_bar(num_epochs)):
        ...
        bar.set_postfix(train=train_loss, val=val_loss)

    curve_slider(x_grid, curves, x_train, y_train, best_epoch=12)   # a widget: drag through epochs

`evaluate` is the validation loop of notebook 02, given: the student writes the same loop once, as
`accuracy`, and `fit` calls this one for its validation loss.
"""

import html
import io

import torch


def evaluate(model, loader, loss_fn, device) -> float:
    """The mean loss of `model` over every sample of `loader`, in eval mode without gradients, as a float.

    Each batch's loss is weighted by its size, so a smaller last batch weighs less; the model is left in
    eval mode, and gradient tracking is on again afterwards.
    """
    model.eval()
    total_loss, total_samples = torch.zeros((), device=device), 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            total_loss += loss_fn(model(x), y) * len(x)
            total_samples += len(x)
    return total_loss.item() / total_samples


def epoch_bar(num_epochs: int, desc: str = "epochs"):
    """An iterable over `range(num_epochs)` that shows a progress bar; `.set_postfix(name=value, ...)`
    adds numbers to it.

    With tqdm installed (Colab has it) this is `tqdm.auto.tqdm(..., leave=False)`: a widget in
    Jupyter and Colab, a text bar in a terminal, removed when the loop ends. Without tqdm it is a
    one-line HTML bar updated in place (at most about 50 updates), or a silent range outside IPython.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _HtmlBar(num_epochs, desc)
    return tqdm(range(num_epochs), desc=desc, leave=False)


class _HtmlBar:
    """The fallback bar: one `display` output, updated in place through its display id."""

    def __init__(self, total: int, desc: str, updates: int = 50):
        self.total, self.desc, self.postfix = total, desc, ""
        self._every = max(1, total // updates)

    def set_postfix(self, refresh: bool = True, **values) -> None:
        """Numbers shown after the bar (tqdm's signature; `refresh` is accepted and ignored)."""
        self.postfix = ", ".join(f"{name}={_short_number(value)}" for name, value in values.items())

    def html(self, done: int) -> str:
        text = f"{self.desc}: {done}/{self.total}" + (f" &middot; {html.escape(self.postfix)}" if self.postfix else "")
        return f'<progress value="{done}" max="{max(self.total, 1)}"></progress> <code>{text}</code>'

    def __len__(self) -> int:
        return self.total

    def __iter__(self):
        handle = _display_handle(self.html(0))
        for epoch in range(self.total):
            yield epoch
            done = epoch + 1
            if handle is not None and (done % self._every == 0 or done == self.total):
                from IPython.display import HTML

                handle.update(HTML(self.html(done)))


def _short_number(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _display_handle(first_html: str):
    """A display handle inside IPython (Jupyter, Colab, nbclient), else None."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return None
    if get_ipython() is None:
        return None
    return display(HTML(first_html), display_id=True)


def curve_figure(x_grid, curve, x_points, y_points, title: str = "", truth=None):
    """A matplotlib Figure (not shown by pyplot) of one fitted `curve` over `x_grid`, the data points,
    and optionally the true function."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.4), dpi=80, layout="constrained")
    ax = fig.subplots()
    ax.scatter(_np(x_points), _np(y_points), color="black", s=18, label="training points", zorder=3)
    if truth is not None:
        ax.plot(_np(x_grid), _np(truth), color="grey", linestyle="--", label="true function")
    ax.plot(_np(x_grid), _np(curve), color="tab:blue", label="model")
    ax.set_ylim(-2.5, 2.5)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small")
    return fig


def figure_png(fig) -> bytes:
    """The PNG bytes of a Figure."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def curve_slider(x_grid, curves, x_points, y_points, best_epoch=None, truth=None, val_losses=None):
    """An ipywidgets slider over epochs showing the fitted curve `curves[epoch]` at that epoch.

    `curves` has one row per epoch (shape `(num_epochs, len(x_grid))`). The slider starts at
    `best_epoch` when given; `val_losses` (one per epoch), when given, is shown in the title.
    The image lives in the widget's state, so a headless run prints nothing.
    """
    import ipywidgets as widgets

    curves = torch.as_tensor(curves)
    last = curves.shape[0] - 1
    slider = widgets.IntSlider(value=last if best_epoch is None else best_epoch, min=0, max=last,
                               description="epoch", continuous_update=False)
    image = widgets.Image(format="png")

    def show(_=None):
        epoch = slider.value
        title = f"epoch {epoch}"
        if val_losses is not None:
            title += f": validation loss {float(val_losses[epoch]):.4f}"
        if best_epoch is not None and epoch == best_epoch:
            title += " (best)"
        image.value = figure_png(curve_figure(x_grid, curves[epoch], x_points, y_points, title, truth))

    slider.observe(show, names="value")
    show()
    from helpers.widgets import interactive

    return interactive([slider, image], "[interactive: a slider over the epochs, showing the fitted curve at each; "
                                        "run the notebook to use it]")


def _np(values):
    return torch.as_tensor(values).detach().cpu().reshape(-1).numpy()
