"""The reference notebook's stored outputs (course.authoring.reference): a line the kernel sent in two
pieces is stored as one output, so a rebuild does not add a stray empty-line output (issue 24)."""

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course.authoring.reference import merge_split_streams


def stream(name: str, text: str):
    return new_output("stream", name=name, text=text)


def test_a_print_sent_in_two_pieces_is_stored_as_one_output():
    cell = new_code_cell("print(x)", outputs=[stream("stdout", "graph nodes kept alive: 120"), stream("stdout", "\n")])
    nb = new_notebook(cells=[new_markdown_cell("text"), cell])
    merge_split_streams(nb)
    assert [(o.name, o.text) for o in nb.cells[1].outputs] == [("stdout", "graph nodes kept alive: 120\n")]


def test_other_streams_and_other_outputs_keep_their_place():
    """stdout, stderr, stdout stay three outputs; a display between two prints keeps them apart."""
    result = new_output("execute_result", data={"text/plain": "3"}, execution_count=1)
    outputs = [stream("stdout", "a\n"), stream("stderr", "warning\n"), stream("stdout", "b"), stream("stdout", "\n"),
               result, stream("stdout", "c\n")]
    nb = new_notebook(cells=[new_code_cell("...", outputs=outputs)])
    merge_split_streams(nb)
    kept = [(o.output_type, o.get("name"), o.get("text")) for o in nb.cells[0].outputs]
    assert kept == [("stream", "stdout", "a\n"), ("stream", "stderr", "warning\n"), ("stream", "stdout", "b\n"),
                    ("execute_result", None, None), ("stream", "stdout", "c\n")]
