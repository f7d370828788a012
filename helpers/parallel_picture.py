"""A picture of data parallelism and model parallelism: who holds what, what crosses the wire."""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

LAYER_COLOURS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2"]
WIRE = "#d62728"


def _box(ax, x, y, w, h, text, colour, text_colour="white", size=9):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=colour,
                                edgecolor="black", linewidth=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", color=text_colour, fontsize=size)


def _arrow(ax, start, end, text, offset=(0, 0.04), both=False):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="<|-|>" if both else "-|>", mutation_scale=14,
                                 color=WIRE, linewidth=2))
    mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
    ax.text(*mid, text, ha="center", va="bottom", color=WIRE, fontsize=8.5)


def _gpu(ax, x, title, layers, data_text, memory_text):
    """One device: a frame, the layers it holds (indices into LAYER_COLOURS), its memory, the data it sees."""
    ax.add_patch(FancyBboxPatch((x, 0.05), 0.36, 0.78, boxstyle="round,pad=0.01", facecolor="#f2f2f2",
                                edgecolor="grey"))
    ax.text(x + 0.18, 0.86, title, ha="center", fontsize=10, weight="bold")
    for slot, layer in enumerate(layers):
        _box(ax, x + 0.04, 0.66 - slot * 0.11, 0.28, 0.09, f"layer {layer + 1}", LAYER_COLOURS[layer])
    ax.text(x + 0.18, 0.255, memory_text, ha="center", va="center", fontsize=7.5, style="italic")
    _box(ax, x + 0.04, 0.1, 0.28, 0.09, data_text, "#ffffff", text_colour="black", size=8.5)


def draw_strategies(num_layers: int = 4):
    """Two panels, data parallel and model parallel, for a `num_layers`-layer model on two devices.

    Returns the matplotlib Figure (a notebook cell shows it).
    """
    if not 2 <= num_layers <= len(LAYER_COLOURS):
        raise ValueError(f"num_layers must be between 2 and {len(LAYER_COLOURS)}")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax in (left, right):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.axis("off")

    all_layers = list(range(num_layers))
    left.set_title("Data parallel: whole model on each device, the batch split", fontsize=10.5)
    _gpu(left, 0.02, "device 0", all_layers, "batch rows 0 .. B/2", "memory: every weight, grad, Adam state")
    _gpu(left, 0.62, "device 1", all_layers, "batch rows B/2 .. B", "memory: every weight, grad, Adam state")
    _arrow(left, (0.39, 0.45), (0.61, 0.45), "all-reduce\ngradients\nonce per step\n(all parameters)", both=True)

    cut = num_layers // 2
    right.set_title("Model parallel: layers split, the whole batch flows through", fontsize=10.5)
    _gpu(right, 0.02, "device 0", all_layers[:cut], "whole batch in", "memory: its own layers only")
    _gpu(right, 0.62, "device 1", all_layers[cut:], "output, loss", "memory: its own layers only")
    _arrow(right, (0.39, 0.55), (0.61, 0.55), "activations\n(forward)")
    _arrow(right, (0.61, 0.35), (0.39, 0.35), "their gradients\n(backward)", offset=(0, -0.13))
    fig.tight_layout()
    return fig


def draw_all_reduce(per_replica):
    """All-reduce (mean) drawn on real numbers: `per_replica` is a (replicas, n) tensor, one row per
    replica's gradient entries. Left, what each replica holds before; right, what every replica
    holds after: the mean of the rows. Returns the matplotlib Figure."""
    before = per_replica.detach().cpu().double()
    after = before.mean(dim=0)
    replicas, n = before.shape
    limit = 1.15 * max(before.abs().max().item(), 1e-12)
    fig, axes = plt.subplots(replicas, 2, figsize=(10, 1.1 * replicas + 0.9), sharex=True, sharey=True,
                             squeeze=False)
    for r in range(replicas):
        for column, values in enumerate((before[r], after)):
            ax = axes[r, column]
            ax.bar(range(n), values.tolist(), color=LAYER_COLOURS[r % len(LAYER_COLOURS)] if column == 0 else WIRE)
            ax.axhline(0, color="grey", linewidth=0.6)
            ax.set_ylim(-limit, limit)
            ax.set_yticks([])
        axes[r, 0].set_ylabel(f"replica {r}", rotation=0, ha="right", va="center", fontsize=9)
    axes[0, 0].set_title("before: each replica's own gradient", fontsize=10)
    axes[0, 1].set_title("after all-reduce: every replica holds the mean", fontsize=10)
    for column in (0, 1):
        axes[-1, column].set_xticks(range(n), [f"g[{i}]" for i in range(n)], fontsize=8)
    fig.tight_layout()
    return fig
