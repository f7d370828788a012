"""helpers.debug_pictures: do the pictures draw what they were given, and what torch says?"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from helpers.debug_pictures import draw_broadcast, draw_promotion, draw_shape_trace  # noqa: E402


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_shape_trace_has_one_bar_per_step_sized_per_example_and_the_failure_in_red():
    trace = [("input", (8, 1, 8, 8)), ("conv", (8, 4, 6, 6)), ("flatten", (8, 144))]
    fig = draw_shape_trace(trace, failed_layer="head", wanted_features=100)
    try:
        ax = fig.axes[0]
        heights = [bar.get_height() for bar in ax.patches]
        assert heights == [64, 144, 144, 100]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["input", "conv", "flatten", "head"]
        assert "(4, 6, 6)" in _texts(ax) and any("wants 100" in t and "got 144" in t for t in _texts(ax))
        assert "head fails" in ax.get_title()
    finally:
        plt.close(fig)


def test_shape_trace_without_a_failure_draws_only_the_steps():
    fig = draw_shape_trace([("0", (2, 3)), ("1", (2, 5))])
    try:
        assert [bar.get_height() for bar in fig.axes[0].patches] == [3, 5]
    finally:
        plt.close(fig)


def test_broadcast_shows_the_meant_pairs_and_the_grid_with_their_means():
    fig = draw_broadcast(torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([1.0, 2.0, 3.0]))
    try:
        meant, grid = fig.axes
        assert _texts(meant) == ["0", "0", "0"]
        assert _texts(grid) == ["0", "1", "4", "1", "0", "1", "4", "1", "0"]
        assert "mean 0" in meant.get_title() and "mean 1.333" in grid.get_title()
    finally:
        plt.close(fig)


def test_promotion_table_is_torchs_own_rule():
    dtypes = [torch.int64, torch.float32, torch.float64]
    fig = draw_promotion(dtypes)
    try:
        cells = _texts(fig.axes[0])
        assert cells == ["int64", "float32", "float64", "float32", "float32", "float64",
                         "float64", "float64", "float64"]
    finally:
        plt.close(fig)
