"""Measuring and estimating where training memory goes (notebook 03).

What a student may rely on:

- `memory_demo_model()` and `memory_demo_batch(device)`: the model and batch notebook 03
  measures. They are functions so that a GPU run (or a later report) measures exactly
  the same thing: same seed, same shapes, same numbers of bytes.
- `format_bytes`, `storage_bytes`: reading byte counts. Two tensors that share memory (a
  view and its base, the same tensor saved twice) are counted once.
- `graph_saved_tensors`: the tensors an autograd graph still holds for its backward
  pass, found by walking the graph from its output. It is a second, independent way of
  seeing activation memory (the notebook's exercise uses saved-tensor hooks instead).
- `estimate_training_bytes`, `memory_plan_table`, `memory_calculator`,
  `plot_memory_breakdown`: a back-of-the-envelope plan, as numbers, a widget and a chart.
"""

import torch
from torch import nn

# The notebook's model: wide enough that its activations, not its weights, dominate.
DEMO_IN_FEATURES, DEMO_HIDDEN, DEMO_CLASSES, DEMO_BATCH_SIZE = 128, 256, 10, 2048

# Extra tensors, each the size of the trainable parameters, that an optimizer keeps.
OPTIMIZER_STATE_COPIES = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}

# Memory of some GPUs people train on, in bytes, as the vendors count them (1 GB = 10**9 bytes).
GPU_MEMORY_BYTES = {
    "T4 (16 GB, free Colab)": 16 * 10**9,
    "RTX 4090 (24 GB)": 24 * 10**9,
    "A100 (40 GB)": 40 * 10**9,
    "A100 (80 GB)": 80 * 10**9,
    "H100 (80 GB)": 80 * 10**9,
    "H200 (141 GB)": 141 * 10**9,
}


def memory_demo_model(seed: int = 0) -> nn.Sequential:
    """The notebook's model: an MLP 128 -> 256 -> 256 -> 256 -> 10 with ReLUs, in float32 on the CPU.

    The same seed gives the same weights; the global random generator is left alone.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Linear(DEMO_IN_FEATURES, DEMO_HIDDEN), nn.ReLU(),
            nn.Linear(DEMO_HIDDEN, DEMO_HIDDEN), nn.ReLU(),
            nn.Linear(DEMO_HIDDEN, DEMO_HIDDEN), nn.ReLU(),
            nn.Linear(DEMO_HIDDEN, DEMO_CLASSES),
        )


def memory_demo_batch(device="cpu", batch_size: int = DEMO_BATCH_SIZE, seed: int = 1):
    """The notebook's batch `(x, y)` on `device`: float32 inputs `(batch_size, 128)` and int64 labels in [0, 10)."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, DEMO_IN_FEATURES, generator=generator)
    y = torch.randint(0, DEMO_CLASSES, (batch_size,), generator=generator)
    return x.to(device), y.to(device)


def format_bytes(num_bytes: float) -> str:
    """`num_bytes` in binary units with two decimals: '0 B', '512 B', '1.50 KiB', '26.00 MiB', '3.25 GiB'."""
    value = float(num_bytes)
    if abs(value) < 1024:
        return f"{int(value)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.2f} {unit}"
    raise AssertionError("unreachable")


def _storage_key(tensor: torch.Tensor) -> tuple:
    storage = tensor.untyped_storage()
    return (tensor.device.type, tensor.device.index, storage.data_ptr())


def storage_bytes(tensors) -> int:
    """Bytes of memory behind `tensors`, each underlying storage counted once.

    A view (`w.t()`, a slice) counts the whole storage it looks into, because that is
    what it keeps alive; a tensor listed twice, or two views of one tensor, count once.
    """
    sizes = {}
    for tensor in tensors:
        sizes.setdefault(_storage_key(tensor), tensor.untyped_storage().nbytes())
    return sum(sizes.values())


def _saved_values(node):
    """The tensors a graph node still holds for backward (freed ones are skipped)."""
    for name in dir(node):
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(node, name)
        except RuntimeError:  # freed by an earlier backward()
            continue
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, torch.Tensor):
                yield item


def _graph_nodes(outputs):
    stack = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(child for child, _ in node.next_functions if child is not None)


def graph_saved_tensors(*outputs, exclude=()) -> list:
    """The distinct tensors that the autograd graph behind `outputs` still holds for backward.

    Walks the graph from each output's `grad_fn` and reads what every node saved. Tensors
    sharing a storage are returned once. Storages of the tensors in `exclude` (pass
    `model.parameters()` to leave the weights out) are skipped. After `backward()` a graph
    has freed what it saved, and this returns `[]`. A float or a tensor without a graph
    holds nothing.
    """
    skip = {_storage_key(t) for t in exclude}
    found = {}
    for node in _graph_nodes(outputs):
        for tensor in _saved_values(node):
            key = _storage_key(tensor)
            if key not in skip:
                found.setdefault(key, tensor)
    return list(found.values())


def graph_node_count(*outputs) -> int:
    """How many autograd nodes are reachable from `outputs`: a graph's size, even once its saved tensors are freed."""
    return sum(1 for _ in _graph_nodes(outputs))


def estimate_training_bytes(num_params: int, activations_per_sample: int, batch_size: int,
                            optimizer: str = "adam", precision: str = "float32") -> dict:
    """A back-of-the-envelope plan: bytes of each part of training memory, as a dict.

    `activations_per_sample`: how many numbers one example's forward pass saves for
    backward (measure it on a batch of one). `precision` is "float32" or "mixed"
    (autocast to a 16-bit type). Under "mixed" the weights, their gradients and the
    optimizer state stay float32; the saved activations take 2 bytes each, and autocast
    keeps a 16-bit copy of the weights. Ignores the CUDA context, the allocator's cache,
    and temporary buffers: leave room for them.
    """
    if optimizer not in OPTIMIZER_STATE_COPIES:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_STATE_COPIES)}, got {optimizer!r}")
    if precision not in ("float32", "mixed"):
        raise ValueError(f"precision must be 'float32' or 'mixed', got {precision!r}")
    mixed = precision == "mixed"
    return {
        "weights": 4 * num_params,
        "gradients": 4 * num_params,
        "optimizer state": 4 * num_params * OPTIMIZER_STATE_COPIES[optimizer],
        "16-bit weight copies": 2 * num_params if mixed else 0,
        "activations": (2 if mixed else 4) * activations_per_sample * batch_size,
    }


def memory_plan_table(num_params: int, activations_per_sample: int, batch_size: int,
                      optimizer: str = "adam", precision: str = "float32",
                      gpu: str = "T4 (16 GB, free Colab)") -> str:
    """`estimate_training_bytes` as a table, with the total against `gpu`'s memory and a verdict."""
    parts = estimate_training_bytes(num_params, activations_per_sample, batch_size, optimizer, precision)
    total, capacity = sum(parts.values()), GPU_MEMORY_BYTES[gpu]
    lines = [f"{name:<22}{format_bytes(size):>12}" for name, size in parts.items()]
    lines.append(f"{'total':<22}{format_bytes(total):>12}")
    verdict = "fits" if total <= 0.9 * capacity else "does NOT fit"
    lines.append(f"{gpu}: {format_bytes(capacity)} -> {verdict} ({100 * total / capacity:.0f}% of it; "
                 "keep ~10% for the CUDA context and the allocator)")
    return "\n".join(lines)


def _choices(value: float, usual: tuple[float, ...]) -> list[float]:
    """`usual`, with `value` among them: a slider's stops, so that it starts exactly at `value`."""
    return sorted(set(usual) | {value})


def memory_calculator(num_params_millions: float = 125.0, activations_per_sample_millions: float = 250.0,
                      batch_size: int = 16, optimizer: str = "adam", precision: str = "float32",
                      gpu: str = "T4 (16 GB, free Colab)"):
    """Sliders and menus for `memory_plan_table`; the table updates as you change them.

    It starts at exactly the given values (the defaults are the example 03 prints just above it):
    the sliders stop at round numbers plus those values, rather than snapping to a log scale."""
    import html

    import ipywidgets as widgets

    wide = {"style": {"description_width": "initial"}}      # labels in full, never cut off
    slider = dict(wide, layout={"width": "640px"})          # and room left for the slider itself
    params = widgets.SelectionSlider(
        options=_choices(num_params_millions, (1, 10, 50, 125, 350, 770, 1300, 3000, 7000, 13000)),
        value=num_params_millions, description="parameters (millions)", **slider)
    acts = widgets.SelectionSlider(
        options=_choices(activations_per_sample_millions, (0.1, 1, 10, 50, 100, 250, 500, 1000)),
        value=activations_per_sample_millions, description="activation values per example (millions)", **slider)
    batch = widgets.SelectionSlider(options=_choices(batch_size, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)),
                                    value=batch_size, description="batch size", **slider)
    opt = widgets.Dropdown(options=list(OPTIMIZER_STATE_COPIES), value=optimizer, description="optimizer", **wide)
    prec = widgets.ToggleButtons(options=["float32", "mixed"], value=precision, description="precision", **wide)
    card = widgets.Dropdown(options=list(GPU_MEMORY_BYTES), value=gpu, description="GPU", **wide)
    # An HTML widget rather than an Output widget: headless runs (nbval, nbgrader) print nothing extra.
    view = widgets.HTML()

    def show(_=None):
        text = memory_plan_table(int(params.value * 1e6), int(acts.value * 1e6), batch.value,
                                 opt.value, prec.value, card.value)
        view.value = f"<pre>{html.escape(text)}</pre>"

    for control in (params, acts, batch, opt, prec, card):
        control.observe(show, names="value")
    show()
    from helpers.widgets import interactive

    return interactive([params, acts, batch, widgets.HBox([opt, card]), prec, view],
                       "[interactive: a memory calculator with sliders for the model, the batch, the optimizer, "
                       "the precision and the GPU; run the notebook to use it]")


def plot_memory_breakdown(breakdowns: dict, title: str = "Where training memory goes"):
    """Stacked bars, one per entry of `breakdowns` ({label: {part: bytes}}), in MiB; returns the Figure.

    The figure is closed in pyplot: a notebook shows it once, as the value of the cell's last line.
    """
    import matplotlib.pyplot as plt

    labels = list(breakdowns)
    parts = list(dict.fromkeys(part for b in breakdowns.values() for part in b))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    bottoms = [0.0] * len(labels)
    for part in parts:
        heights = [breakdowns[label].get(part, 0) / 2**20 for label in labels]
        ax.bar(labels, heights, bottom=bottoms, label=part)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for i, total in enumerate(bottoms):
        ax.text(i, total, f"{total:.1f} MiB", ha="center", va="bottom")
    ax.set_ylim(0, max(bottoms, default=0) * 1.15 or 1)   # room for the totals under the title
    ax.set_ylabel("MiB")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    plt.close(fig)   # shown once, as the cell's value, not again by pyplot when the cell ends
    return fig
