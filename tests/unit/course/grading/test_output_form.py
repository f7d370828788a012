"""course.grading.output_form: whatever the kernel sends becomes an output nbformat's schema accepts, and a
valid output is left exactly as it was."""

import copy

import nbformat
import pytest

from course.grading.output_form import REPLACED, mend

VALID = [
    ("stream", {"name": "stderr", "text": "warning\n"}),
    ("display_data", {"data": {"text/plain": ["a", "b"], "image/png": "iVBOR", "application/json": {"k": [1]}},
                      "metadata": {"image/png": {"width": 3}}}),
    ("execute_result", {"data": {"text/plain": "4"}, "metadata": {}, "execution_count": 7}),
    ("error", {"ename": "ValueError", "evalue": "no", "traceback": ["line 1", "line 2"]}),
]

INVALID = [
    ("stream", {"name": "stdin", "text": 5}),
    ("display_data", {"data": {"text/plain": 5, "image/png": 7}, "metadata": [1]}),
    ("display_data", {"data": "text", "metadata": {}}),
    ("display_data", {"data": {"text/plain": ["a", 2], "text/html": None}, "metadata": {}}),
    ("execute_result", {"data": {"text/plain": "4"}, "metadata": {}, "execution_count": "7"}),
    ("error", {"ename": 1, "evalue": None, "traceback": "not a list"}),
    ("error", {"ename": "E", "evalue": "v", "traceback": ["ok", 3]}),
]


def _output(msg_type, content):
    msg = {"header": {"msg_type": msg_type}, "msg_type": msg_type, "content": content}
    return nbformat.v4.output_from_msg(msg)


def _validate(output):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[output])])
    nbformat.validate(nb)


@pytest.mark.parametrize("msg_type,content", VALID)
def test_a_valid_output_is_left_as_it_was(msg_type, content):
    mended = copy.deepcopy(content)
    mend(msg_type, mended)
    assert mended == content
    _validate(_output(msg_type, mended))


@pytest.mark.parametrize("msg_type,content", INVALID)
def test_an_invalid_output_is_made_valid(msg_type, content):
    with pytest.raises(nbformat.ValidationError):
        _validate(_output(msg_type, copy.deepcopy(content)))
    mend(msg_type, content)
    _validate(_output(msg_type, content))
    assert REPLACED in repr(content) or msg_type in ("stream", "execute_result")


@pytest.mark.parametrize("msg_type", ["execute_input", "execute_result", "a_type_of_its_own"])
def test_any_messages_execution_count_that_is_not_a_number_is_dropped(msg_type):
    """nbclient copies any message's execution_count onto the cell; a string there made nbgrader refuse the notebook
    (issue 38's last red team: an execute_result with a text count, then a print)."""
    content = {"execution_count": "\x1b[2J7", "data": {"text/plain": "x"}, "metadata": {}}
    mend(msg_type, content)
    assert content["execution_count"] is None
    kept = {"execution_count": 3, "data": {"text/plain": "x"}, "metadata": {}}
    mend(msg_type, kept)
    assert kept["execution_count"] == 3


def test_the_grader_mends_a_message_before_nbclient_copies_its_count_onto_the_cell():
    from course.grading.execute import GuardedExecute

    executor = GuardedExecute.__new__(GuardedExecute)      # process_message needs no kernel
    cell = nbformat.v4.new_code_cell("x")
    cell.metadata["execution"] = {}
    msg = {"msg_type": "execute_input", "header": {"msg_type": "execute_input"}, "parent_header": {},
           "content": {"execution_count": "\x1b[2J", "code": "x"}}
    executor.process_message(msg, cell, 0)
    assert cell.execution_count is None
    nbformat.validate(nbformat.v4.new_notebook(cells=[cell]))
