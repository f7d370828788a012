"""A picture of broadcasting: each input drawn stretched to the result's shape, copies faded."""

import matplotlib.pyplot as plt
import torch

REAL, COPY = "#4c72b0", "#c6d3ea"   # a number that is stored / a number broadcasting repeats


def _grid(ax, values: torch.Tensor, stored_shape, title: str):
    """Draw a 2-D grid of `values`; cells beyond `stored_shape` (the repeated ones) are faded."""
    rows, cols = values.shape
    for r in range(rows):
        for c in range(cols):
            stored = r < stored_shape[0] and c < stored_shape[1]
            ax.add_patch(plt.Rectangle((c, rows - 1 - r), 1, 1, facecolor=REAL if stored else COPY,
                                       edgecolor="white", linewidth=2))
            ax.text(c + 0.5, rows - 0.5 - r, f"{values[r, c].item():g}", ha="center", va="center",
                    color="white" if stored else "#333333", fontsize=10)
    ax.set_xlim(0, cols)
    ax.set_ylim(0, rows)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=10)


def draw_broadcast(a: torch.Tensor, b: torch.Tensor):
    """Three panels for `a + b` with 2-D `a` and `b`: `a` and `b` each stretched to the result's shape
    (stored numbers dark, repeated ones faded), and the result. Returns the matplotlib Figure.
    """
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError("draw_broadcast draws 2-D tensors only")
    result = a + b   # raises PyTorch's own error when the shapes do not broadcast
    fig, axes = plt.subplots(1, 3, figsize=(9, 2.6))
    _grid(axes[0], a.expand_as(result), a.shape, f"a {tuple(a.shape)} stretched")
    _grid(axes[1], b.expand_as(result), b.shape, f"b {tuple(b.shape)} stretched")
    _grid(axes[2], result, result.shape, f"a + b {tuple(result.shape)}")
    fig.text(0.355, 0.45, "+", fontsize=18, ha="center")
    fig.text(0.655, 0.45, "=", fontsize=18, ha="center")
    fig.suptitle("broadcasting: size-1 axes repeated (faded) to the common shape", fontsize=10)
    return fig
