"""helpers.widgets: the broadcasting table and explorer."""

from helpers import widgets


def test_broadcast_table_shows_alignment_and_refusal():
    table = widgets.broadcast_table((8, 1, 6, 1), (7, 1, 5))
    assert "(8, 7, 6, 5)" in table and "  -" in table
    assert "not broadcastable" in widgets.broadcast_table((2, 3), (3, 2))


def test_broadcast_explorer_updates_as_shapes_change():
    box = widgets.broadcast_explorer("3, 1", "1, 4")
    view = box.children[1]
    assert "(3, 4)" in view.value
    shape_b = box.children[0].children[1]
    shape_b.value = "5, 1, 4"
    assert "(5, 3, 4)" in view.value
    shape_b.value = "x"
    assert "comma-separated" in view.value
