"""Unit tests of course.plugins.feedback.FeedbackExporter: nbconvert's HTML, page for page, however often it renders."""

import base64
import copy

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter

from course.plugins.feedback import FeedbackExporter

# A 1x1 PNG: an image output, which the page must give alt text.
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201e2213bc40000000049454e44ae426082")).decode()


def _notebook(code: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nSome *markdown* with `code` and $x^2$.\n\n![alt given](x.png)"),
        nbformat.v4.new_code_cell(code, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="printed\n"),
            nbformat.v4.new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"}),
        ]),
        nbformat.v4.new_code_cell("%%bash\necho hi", metadata={"magics_language": "bash"}),
    ]
    return nb


def _normalized(page: str) -> str:
    """The page as BeautifulSoup writes it back, which is what nbconvert's own exporter returns."""
    soup = BeautifulSoup(page, features="html.parser")
    for img in soup.select("img:not([alt])"):
        img.attrs["alt"] = "No description has been provided for this image"
    return str(soup)


@pytest.mark.slow      # nbconvert's HTML export of a whole notebook, twice
def test_same_page_as_nbconvert_first_time_and_from_memory():
    # "classic" is the template nbgrader's feedback template extends.
    for code in ("x = 1\nprint(x)", "import torch\ny = torch.ones(2)  # another student's answer"):
        nb = _notebook(code)
        expected, _ = HTMLExporter(template_name="classic").from_notebook_node(copy.deepcopy(nb))
        first, _ = FeedbackExporter(template_name="classic").from_notebook_node(copy.deepcopy(nb))
        again, _ = FeedbackExporter(template_name="classic").from_notebook_node(copy.deepcopy(nb))
        assert first == again
        assert _normalized(first) == _normalized(expected)
        assert "another student" in first or "print" in first


def test_every_image_has_alt_text_and_given_alt_text_is_kept():
    page, _ = FeedbackExporter(template_name="classic").from_notebook_node(_notebook("x = 1"))
    images = BeautifulSoup(page, "html.parser").find_all("img")
    assert len(images) == 2
    assert all(img.get("alt") for img in images)
    assert "alt given" in [img.get("alt") for img in images]


def test_remembered_markdown_depends_on_the_source():
    one, _ = FeedbackExporter(template_name="classic").from_notebook_node(_notebook("a = 1"))
    nb = _notebook("a = 1")
    nb.cells[0].source = "# Another title"
    two, _ = FeedbackExporter(template_name="classic").from_notebook_node(nb)
    assert "Another title" in two and "Another title" not in one
