"""Unit tests of helpers.memory: the measuring and planning code notebook 03's demos rely on."""

import pytest
import torch
from torch import nn

from helpers import memory
from helpers.memory import (estimate_training_bytes, format_bytes, graph_node_count, graph_saved_tensors,
                            memory_demo_batch, memory_demo_model, memory_plan_table, storage_bytes)


def test_demo_model_is_seeded_and_leaves_the_global_generator_alone():
    torch.manual_seed(5)
    expected_next = torch.rand(3)
    torch.manual_seed(5)
    a, b = memory_demo_model(), memory_demo_model()
    assert torch.equal(torch.rand(3), expected_next)
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)
    assert not torch.equal(memory_demo_model(seed=1)[0].weight, a[0].weight)
    assert sum(p.numel() for p in a.parameters()) == 128 * 256 + 256 + 2 * (256 * 256 + 256) + 256 * 10 + 10


def test_demo_batch_shapes_dtypes_and_device():
    x, y = memory_demo_batch()
    assert x.shape == (memory.DEMO_BATCH_SIZE, memory.DEMO_IN_FEATURES) and x.dtype == torch.float32
    assert y.shape == (memory.DEMO_BATCH_SIZE,) and y.dtype == torch.int64
    assert int(y.min()) >= 0 and int(y.max()) < memory.DEMO_CLASSES
    x2, _ = memory_demo_batch()
    assert torch.equal(x, x2)
    xm, ym = memory_demo_batch("meta", batch_size=4)
    assert xm.device.type == "meta" and xm.shape == (4, memory.DEMO_IN_FEATURES) and ym.shape == (4,)
    assert memory_demo_model()(x).shape == (memory.DEMO_BATCH_SIZE, memory.DEMO_CLASSES)


@pytest.mark.parametrize("num_bytes, text", [(0, "0 B"), (512, "512 B"), (1536, "1.50 KiB"),
                                             (26 * 2**20, "26.00 MiB"), (3.25 * 2**30, "3.25 GiB"),
                                             (2**50, "1024.00 TiB")])
def test_format_bytes(num_bytes, text):
    assert format_bytes(num_bytes) == text


def test_storage_bytes_counts_each_storage_once():
    w = torch.zeros(16, 4)
    assert storage_bytes([w]) == 256
    assert storage_bytes([w, w, w.t(), w[:2]]) == 256   # views keep the whole storage alive
    assert storage_bytes([w, torch.zeros(3, dtype=torch.bfloat16)]) == 256 + 6
    assert storage_bytes([]) == 0


def test_graph_saved_tensors_finds_what_autograd_saved():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = torch.randn(32, 8)
    out = model(x)
    # x (1024 B), the ReLU output (2048 B, saved twice, counted once), the last weight (256 B).
    assert storage_bytes(graph_saved_tensors(out)) == 1024 + 2048 + 256
    assert storage_bytes(graph_saved_tensors(out, exclude=model.parameters())) == 1024 + 2048
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out16 = model(x)
    assert storage_bytes(graph_saved_tensors(out16, exclude=model.parameters())) == 512 + 1024 + 128


def test_graph_saved_tensors_agrees_with_saved_tensor_hooks():
    model = memory_demo_model()
    x, _ = memory_demo_batch(batch_size=64)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    hooked = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            hooked[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    assert storage_bytes(graph_saved_tensors(out, exclude=model.parameters())) == sum(hooked.values())


def test_graph_is_empty_after_backward_and_for_plain_values():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = model(torch.randn(5, 4)).sum()
    nodes = graph_node_count(loss)
    assert graph_saved_tensors(loss) != []
    loss.backward()
    assert graph_saved_tensors(loss) == []
    assert graph_node_count(loss) == nodes      # the nodes stay while the tensor lives
    assert graph_saved_tensors(3.0, torch.ones(2)) == []
    assert graph_node_count(torch.ones(2)) == 0


def test_kept_loss_tensors_hold_every_graph():
    model = nn.Linear(8, 8)
    total = 0.0
    held = []
    for _ in range(3):
        total = total + model(torch.randn(16, 8)).relu().sum()
        held.append(storage_bytes(graph_saved_tensors(total, exclude=model.parameters())))
    assert held[1] == 2 * held[0] and held[2] == 3 * held[0]


def test_estimate_training_bytes():
    parts = estimate_training_bytes(1000, 50, 8, "adam", "float32")
    assert parts == {"weights": 4000, "gradients": 4000, "optimizer state": 8000,
                     "16-bit weight copies": 0, "activations": 1600}
    mixed = estimate_training_bytes(1000, 50, 8, "momentum", "mixed")
    assert mixed["optimizer state"] == 4000 and mixed["16-bit weight copies"] == 2000 and mixed["activations"] == 800
    assert mixed["weights"] == 4000   # master weights stay float32
    assert estimate_training_bytes(1000, 50, 8, "sgd")["optimizer state"] == 0
    with pytest.raises(ValueError):
        estimate_training_bytes(1000, 50, 8, "rmsprop")
    with pytest.raises(ValueError):
        estimate_training_bytes(1000, 50, 8, "adam", "float16")


@pytest.mark.slow
def test_estimate_matches_the_demo_model_measurement():
    model = memory_demo_model()
    x, y = memory_demo_batch(batch_size=32)
    optimizer = torch.optim.Adam(model.parameters())
    out = model(x)
    saved = storage_bytes(graph_saved_tensors(out, exclude=model.parameters()))
    nn.functional.cross_entropy(out, y).backward()
    optimizer.step()
    num_params = sum(p.numel() for p in model.parameters())
    parts = estimate_training_bytes(num_params, saved // 4 // 32, 32, "adam", "float32")
    state = [t for s in optimizer.state.values() for k, t in s.items() if k != "step"]
    assert parts["optimizer state"] == storage_bytes(state)
    assert parts["activations"] == saved


def test_memory_plan_table_verdicts():
    fits = memory_plan_table(1_000_000, 1000, 8, "adam", "mixed", "H200 (141 GB)")
    assert "fits" in fits and "NOT" not in fits and fits.splitlines()[0].startswith("weights")
    too_big = memory_plan_table(10_000_000_000, 1000, 8, "adam", "float32", "T4 (16 GB, free Colab)")
    assert "does NOT fit" in too_big


def test_memory_calculator_builds_and_updates():
    widget = memory.memory_calculator()
    view = widget.children[-1]
    before = view.value
    widget.children[2].value = 256   # batch size
    assert view.value != before and "total" in view.value


def test_memory_calculator_starts_at_notebook_03s_example_with_its_labels_in_full():
    """Notebook 03 prints this plan just above the widget: the widget must start with the same table."""
    import html

    widget = memory.memory_calculator()
    example = memory_plan_table(num_params=125_000_000, activations_per_sample=250_000_000, batch_size=16,
                                optimizer="adam", precision="float32", gpu="T4 (16 GB, free Colab)")
    assert html.unescape(widget.children[-1].value) == f"<pre>{example}</pre>"
    controls = [c for c in widget.children[:-1] if hasattr(c, "description")]
    controls += [c for box in widget.children if hasattr(box, "children") for c in box.children]
    assert {c.description for c in controls} >= {"parameters (millions)", "activation values per example (millions)"}
    assert all(c.style.description_width == "initial" for c in controls), "a label would be cut off"
    sliders = [c for c in controls if "Slider" in type(c).__name__]
    assert len(sliders) == 3 and all(c.layout.width for c in sliders), "a long label would squeeze its slider"


def test_plot_memory_breakdown_stacks_every_part():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = memory.plot_memory_breakdown({"a": {"weights": 2**20, "activations": 2**21}, "b": {"weights": 2**20}})
    ax = fig.axes[0]
    assert len(ax.patches) == 4   # 2 parts x 2 bars
    assert [t.get_text() for t in ax.texts] == ["3.0 MiB", "1.0 MiB"]
    plt.close(fig)
