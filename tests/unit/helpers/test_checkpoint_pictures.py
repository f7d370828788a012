"""Unit tests of helpers.checkpoint_pictures: the pictures draw exactly the entries and bytes they are given."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from helpers.checkpoint_pictures import BUFFER, PARAMETER, draw_checkpoint, draw_state_dict, tensor_bytes  # noqa: E402


def test_tensor_bytes_counts_nested_tensors_only():
    assert tensor_bytes(torch.zeros(3)) == 12
    nested = {"a": [torch.zeros(2, dtype=torch.float64), 7], "b": ("x", torch.zeros(1, dtype=torch.uint8))}
    assert tensor_bytes(nested) == 17
    assert tensor_bytes(3.5) == 0


def test_state_dict_picture_has_a_bar_per_entry_coloured_by_kind():
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))
    fig = draw_state_dict(model)
    ax = fig.axes[0]
    bars = ax.patches
    assert [t.get_text() for t in ax.get_yticklabels()] == list(model.state_dict())
    assert [b.get_width() for b in bars] == [32, 8, 8, 8, 8, 8, 1]       # a 0-dim tensor holds one element
    colours = [matplotlib.colors.to_hex(b.get_facecolor()) for b in bars]
    assert colours == [PARAMETER] * 4 + [BUFFER] * 3
    fig.canvas.draw()
    assert not any("$" in t.get_text() for t in ax.get_xticklabels(minor=False) + ax.get_xticklabels(minor=True))
    plt.close(fig)


def test_checkpoint_picture_shows_the_bytes_of_each_key():
    checkpoint = {"epoch": 2, "model": nn.Linear(2, 3).state_dict(), "rng": torch.zeros(10, dtype=torch.uint8)}
    fig = draw_checkpoint(checkpoint)
    ax = fig.axes[0]
    assert [p.get_width() for p in ax.patches] == [0, 36, 10]
    assert "36 bytes of tensors (dict of 2)" in [t.get_text() for t in ax.texts]
    plt.close(fig)
