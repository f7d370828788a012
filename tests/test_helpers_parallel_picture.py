"""helpers.parallel_picture: the two-strategy picture draws, and says what crosses the wire."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.parallel_picture import draw_strategies  # noqa: E402


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
