"""helpers.parallel_picture: the two-strategy picture draws, and says what crosses the wire."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.parallel_picture import draw_all_reduce, draw_strategies  # noqa: E402


def _texts(fig):
    return " ".join(t.get_text() for ax in fig.axes for t in ax.texts + [ax.title])


def test_draws_both_strategies_with_their_traffic():
    fig = draw_strategies(num_layers=4)
    try:
        assert len(fig.axes) == 2
        text = _texts(fig)
        assert "all-reduce" in text and "activations" in text
        assert text.count("layer 1") == 3   # both data-parallel devices and model-parallel device 0
        assert text.count("layer 4") == 3   # both data-parallel devices and model-parallel device 1
    finally:
        plt.close(fig)


def test_refuses_layer_counts_it_cannot_draw():
    for bad in (1, 5):
        with pytest.raises(ValueError):
            draw_strategies(num_layers=bad)


def test_all_reduce_picture_shows_each_replica_before_and_the_mean_after():
    grads = torch.tensor([[1.0, -2.0, 3.0], [3.0, 0.0, -1.0]])
    fig = draw_all_reduce(grads)
    try:
        axes = fig.axes
        assert len(axes) == 4                                   # 2 replicas x (before, after)
        heights = [[bar.get_height() for bar in ax.patches] for ax in axes]
        assert heights[0] == [1.0, -2.0, 3.0] and heights[2] == [3.0, 0.0, -1.0]   # before, row by row
        assert heights[1] == heights[3] == [2.0, -1.0, 1.0]     # after: the same mean on every replica
        assert "all-reduce" in _texts(fig)
    finally:
        plt.close(fig)
