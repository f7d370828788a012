"""Pictures for notebook 06: a shape trace, a broadcast gone wrong, the dtype promotion table.

Each function draws data the notebook computed (or asks torch itself, for the promotion table)
and returns the matplotlib Figure, so that a notebook cell shows it.
"""

import math

import matplotlib.pyplot as plt
import torch

OK, FAILED = "#4c72b0", "#c44e52"


def draw_shape_trace(trace, failed_layer=None, wanted_features=None):
    """Bars of values per example after each step of `trace`, a list of `(name, shape)`.

    Every shape is a batch: the bar is the product of its sizes after the first, and the shape is
    written on it. `failed_layer`, if given, is drawn last in red: the layer that received the last
    shape and refused it; `wanted_features` is how many values per example it wanted.
    """
    names = [name for name, _ in trace]
    sizes = [math.prod(shape[1:]) for _, shape in trace]
    fig, ax = plt.subplots(figsize=(10, 3.4))
    bars = ax.bar(range(len(trace)), sizes, color=OK)
    for bar, (_, shape) in zip(bars, trace):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), str(tuple(shape[1:])),
                ha="center", va="bottom", fontsize=8)
    if failed_layer is not None:
        names.append(failed_layer)
        wanted = wanted_features if wanted_features is not None else 0
        ax.bar(len(trace), wanted, color="none", edgecolor=FAILED, hatch="//", linewidth=1.5)
        ax.text(len(trace), wanted, f"wants {wanted}\ngot {sizes[-1]}", ha="center", va="bottom",
                fontsize=8, color=FAILED)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    if failed_layer is not None:
        ax.get_xticklabels()[-1].set_color(FAILED)
    ax.set_ylabel("values per example")
    ax.set_title("shape after each layer (batch axis left out)" +
                 (f"; {failed_layer} fails" if failed_layer is not None else ""), fontsize=10)
    ax.set_ylim(0, max(sizes + [wanted_features or 0]) * 1.25)
    fig.tight_layout()
    return fig


def draw_broadcast(prediction, target):
    """What `mse_loss(prediction, target)` averages when a `(N, 1)` prediction meets `(N,)` targets.

    Left: the N differences meant (prediction i with target i). Right: the N x N grid that
    broadcasting makes instead (prediction i with every target j), each cell its squared difference.
    """
    meant = (prediction.reshape(-1) - target).pow(2)
    grid = (prediction.reshape(-1, 1) - target.reshape(1, -1)).pow(2)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.2), gridspec_kw={"width_ratios": [1, len(target)]})
    for ax, values, title in ((left, meant.reshape(-1, 1), f"meant: {len(target)} pairs\nmean {meant.mean():.4g}"),
                              (right, grid, f"broadcast: {grid.shape[0]} x {grid.shape[1]} pairs\n"
                                            f"mean {grid.mean():.4g}")):
        ax.imshow(values, cmap="Reds", vmin=0, vmax=max(grid.max().item(), 1e-12))
        for (i, j), value in zip(((i, j) for i in range(values.shape[0]) for j in range(values.shape[1])),
                                 values.reshape(-1).tolist()):
            ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=9)
        ax.set_yticks(range(values.shape[0]), [f"pred {p:.3g}" for p in prediction.reshape(-1).tolist()])
        ax.set_title(title, fontsize=10)
    left.set_xticks([0], ["its target"])
    right.set_xticks(range(len(target)), [f"target {t:.3g}" for t in target.tolist()])
    fig.suptitle("squared differences that mse_loss averages", fontsize=10)
    fig.tight_layout()
    return fig


def draw_promotion(dtypes):
    """The dtype of `a + b` for a tensor `a` of each dtype (rows) and `b` of each dtype (columns).

    Asks torch (`torch.promote_types`), so the table is the installed torch's own rule. A cell is
    red where the result is wider than the row's dtype: the row's tensor got promoted, silently.
    """
    short = {d: str(d).replace("torch.", "") for d in dtypes}
    fig, ax = plt.subplots(figsize=(1.1 * len(dtypes) + 1.5, 0.6 * len(dtypes) + 1.2))
    for i, a in enumerate(dtypes):
        for j, b in enumerate(dtypes):
            result = torch.promote_types(a, b)
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, edgecolor="white",
                                       facecolor="#f4cccc" if result != a else "#e8eef7"))
            ax.text(j, i, short[result], ha="center", va="center", fontsize=8,
                    color=FAILED if result != a else "black")
    ax.set_xlim(-0.5, len(dtypes) - 0.5)
    ax.set_ylim(len(dtypes) - 0.5, -0.5)
    ax.set_xticks(range(len(dtypes)), [short[d] for d in dtypes], fontsize=8)
    ax.set_yticks(range(len(dtypes)), [short[d] for d in dtypes], fontsize=8)
    ax.set_xlabel("dtype of b")
    ax.set_ylabel("dtype of a")
    ax.set_title("dtype of a + b, both tensors with dimensions (red: a was promoted)", fontsize=10)
    fig.tight_layout()
    return fig
