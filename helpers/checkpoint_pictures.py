"""Pictures of what gets saved: the entries of a state_dict, and the pieces of a resume checkpoint.

    draw_state_dict(model)          # one bar per entry: parameters and buffers, sized by element count
    draw_checkpoint(checkpoint)     # one bar per key of a checkpoint dict, sized by the bytes it holds

Both return a matplotlib Figure and draw only what they are given, so a notebook's picture is the
same on every run.
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter
import torch
from torch import nn

PARAMETER, BUFFER = "#4c72b0", "#dd8452"


def tensor_bytes(obj) -> int:
    """The bytes of every tensor inside `obj` (tensors, dicts, lists and tuples, nested)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def draw_state_dict(model: nn.Module):
    """A bar per `model.state_dict()` entry, as long as its number of elements; parameters and
    buffers in two colours, each labelled with its shape."""
    parameters = {name for name, _ in model.named_parameters()}
    entries = list(model.state_dict().items())
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(entries) + 1.2))
    for row, (name, tensor) in enumerate(entries):
        colour = PARAMETER if name in parameters else BUFFER
        ax.barh(row, tensor.numel(), color=colour)
        ax.text(tensor.numel() * 1.15, row, f"{tuple(tensor.shape)} {str(tensor.dtype).replace('torch.', '')}",
                va="center", fontsize=8)
    ax.set_yticks(range(len(entries)), [name for name, _ in entries], fontsize=8.5)
    ax.invert_yaxis()
    ax.set_xscale("log")
    # Plain tick labels: log axes write theirs as mathtext ($10^{1}$), whose fonts a machine may lack.
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(0.4, max(t.numel() for _, t in entries) * 30)
    ax.set_xlabel("number of elements (log scale)")
    ax.legend(handles=[Patch(color=PARAMETER, label="parameter (learned by gradient)"),
                       Patch(color=BUFFER, label="buffer (kept, not learned)")], loc="lower right", fontsize=8)
    ax.set_title("model.state_dict(): names to tensors, nothing else", fontsize=10)
    fig.tight_layout()
    return fig


def draw_checkpoint(checkpoint: dict):
    """A bar per key of `checkpoint`, as long as the bytes of the tensors under it, labelled with
    the bytes and with what the value is (a tensor, a dict of n entries, a number)."""
    keys = list(checkpoint)
    sizes = [tensor_bytes(checkpoint[k]) for k in keys]
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(keys) + 1.2))
    ax.barh(range(len(keys)), sizes, color="#55a868")
    for row, key in enumerate(keys):
        value = checkpoint[key]
        kind = (f"dict of {len(value)}" if isinstance(value, dict) else
                f"{type(value).__name__} {value}" if isinstance(value, (int, float)) else type(value).__name__)
        ax.text(sizes[row] + max(sizes) * 0.02, row, f"{sizes[row]:,} bytes of tensors ({kind})", va="center", fontsize=8)
    ax.set_yticks(range(len(keys)), [repr(k) for k in keys], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, max(sizes) * 1.9)
    ax.set_xlabel("bytes of tensor data")
    ax.set_title("a resume checkpoint: one dict, a piece per thing training reads", fontsize=10)
    fig.tight_layout()
    return fig
