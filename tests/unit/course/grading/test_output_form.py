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
