"""helpers.broadcast_picture: the broadcasting picture shows the stretched inputs and the true result."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.broadcast_picture import COPY, REAL, draw_broadcast  # noqa: E402


def test_panels_show_stored_and_repeated_numbers_and_the_sum():
    column, row = torch.tensor([[0.0], [10.0], [20.0]]), torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    fig = draw_broadcast(column, row)
    try:
        a_panel, b_panel, result_panel = fig.axes
        colours = lambda ax: [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]  # noqa: E731
        assert colours(a_panel).count(REAL) == 3 and colours(a_panel).count(COPY) == 9
        assert colours(b_panel).count(REAL) == 4 and colours(b_panel).count(COPY) == 8
        assert colours(result_panel).count(REAL) == 12
        numbers = sorted(float(t.get_text()) for t in result_panel.texts)
        assert numbers == sorted((column + row).flatten().tolist())
        assert "(3, 4)" in result_panel.get_title()
    finally:
        plt.close(fig)


def test_refuses_what_it_cannot_draw():
    with pytest.raises(ValueError):
        draw_broadcast(torch.zeros(3), torch.zeros(1, 3))
    with pytest.raises(RuntimeError):
        draw_broadcast(torch.zeros(2, 3), torch.zeros(3, 2))
    plt.close("all")
