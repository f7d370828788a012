"""Text from a submission reaches the TA inert (issue 38): `course.grading.inert`, one function per channel, and
each channel's use of it; `course.grading.active_content`, the autograded notebook without active content."""

import re
import types

import nbformat
import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from course.grading import active_content, gradebooks, inert, present
from course.grading.class_report import html as class_html
from course.grading.contract import GradeRun, Problem, ProblemKind

# Every class of character a terminal or a page would act on, with how the terminal channel spells it.
CONTROLS = {
    "\x1b]0;pwned\x07": "\\x1b]0;pwned\\x07",           # OSC: sets the window's title
    "\x1b[2J\x1b[H": "\\x1b[2J\\x1b[H",                   # CSI: clears the screen
    "\x9b31m": "\\x9b31m",                                # C1 CSI
    "\x00\x08\x7f": "\\x00\\x08\\x7f",                    # C0, backspace, DEL
    "a\nb\rc\td": "a\\nb\\rc\\td",                        # line breaks and tabs inside one problem
    "\u2028\u2029\x85": "\\u2028\\u2029\\x85",            # Unicode line and paragraph separators, NEL
    "\u202etxt.exe": "\\u202etxt.exe",                    # right-to-left override
    "\u2066\u2067\u2068\u2069": "\\u2066\\u2067\\u2068\\u2069",   # isolates
    "zero\u200bwidth": "zero\\u200bwidth",
}
PAYLOADS = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "[x](javascript:alert(1))",
            "<javascript:alert(1)>", "[x]: javascript:alert(1)", "$\\href{javascript:alert(1)}{x}$",
            "```\n<img src=y onerror=alert(2)>\n```", "````` <b>x</b>", "&#60;img src=z onerror=alert(3)&#62;"]


@pytest.mark.parametrize("raw, shown", CONTROLS.items())
def test_terminal_spells_out_every_control_and_keeps_one_line(raw, shown):
    assert inert.terminal(raw) == shown
    assert inert.terminal(raw).isprintable()


def test_terminal_keeps_what_draws_itself_and_cuts_long_text():
    assert inert.terminal("Ünïcode 名前 'quotes' \\x1b <b> ✓") == "Ünïcode 名前 'quotes' \\x1b <b> ✓"
    long = inert.terminal("x" * 10**6)
    assert len(long) == inert.TERMINAL_WIDTH and long.endswith(inert.CUT)
    assert len(inert.terminal("\x1b" * 10**5, 100)) == 100


def test_html_escapes_text_and_attributes():
    for payload in PAYLOADS:
        assert not set("<>\"'") & set(inert.html(payload))
    assert inert.html("a\x1b<b>'") == "a\\x1b&lt;b&gt;&#x27;"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_markdown_block_renders_as_text(payload):
    lines = [f"- {payload}", payload, "```", "~~~"]
    rendered = markdown2html_mistune(f"before\n\n{inert.markdown_block(lines)}\n\nafter")
    assert "<img" not in rendered and "<script" not in rendered and "<a " not in rendered and "<b>" not in rendered
    assert rendered.rstrip().endswith("<p>after</p>")       # the fence was never closed from inside
    assert "\n" not in inert.markdown_block(["a\nb"]).split("\n", 1)[1].rsplit("\n", 1)[0]


# -- the channels ---------------------------------------------------------------------------------

EVIL_ID = "mallory\x1b]0;owned\x07\n/ 01 / x: 0 problems"


def test_problem_lines_and_report_are_one_line_each():
    problems = {(EVIL_ID, "01"): [Problem("nb.ipynb", "cell 3 carries grade id 'a\nbob / 01 / cheated'",
                                          ProblemKind.CELLS)]}
    lines = present.problem_lines(problems)
    assert len(lines) == 1 and lines[0].isprintable() and "\\x1b]0;owned\\x07\\n" in lines[0]
    run = GradeRun(class_dir=None, assignments=["01"], scores={(EVIL_ID, "01"): (0.0, 1.0)}, problems=problems,
                   graded=[(EVIL_ID, "01")], skipped=[], seconds=1.0, seconds_per_job={}, unsandboxed="",
                   ungraded={("x\rz", "01"): "grader-error: \x1b[2J"})
    limits = types.SimpleNamespace(memory=1 << 30, total_memory=lambda: 1 << 31, processes=64, notebook_timeout=60)
    present.present(run, types.SimpleNamespace(limits=limits))
    for text in (run.table, run.report):
        assert all(line.isprintable() for line in text.splitlines())
    assert len(run.table.splitlines()) == 3 and len(run.report.splitlines()) == 4


def test_progress_lines_are_one_line(capsys):
    progress = present.Progress(1, print)
    job = types.SimpleNamespace(assignment="01", student=EVIL_ID)
    progress.started(job)
    progress.retry(job, "crash\x1b[2J")
    progress.finished(job, True, 0, 1.0)
    err = capsys.readouterr().err
    assert "\x1b" not in err and len(err.splitlines()) == 2


def test_the_class_report_escapes_with_the_one_function(monkeypatch):
    seen = []
    monkeypatch.setattr(inert, "html", lambda value, *a: seen.append(value) or "")
    class_html.page("<b>class</b>", [], ["<img src=x onerror=alert(1)>"])
    assert "<b>class</b>" in seen and "<img src=x onerror=alert(1)>" in seen


def test_findings_stand_in_and_comment_render_as_text(tmp_path, monkeypatch):
    """record_findings writes the report into the stand-in notebook and the formgrader comment as text."""
    written = {}

    comment = types.SimpleNamespace(name="ex", auto_comment=None)
    notebook = types.SimpleNamespace(name="hw", flagged=False, comments=[comment])

    class Gradebook:
        def __init__(self, url):
            pass

        def __enter__(self):
            return types.SimpleNamespace(find_submission=lambda a, s: types.SimpleNamespace(notebooks=[notebook]),
                                         db=types.SimpleNamespace(commit=lambda: None))

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(gradebooks, "Gradebook", Gradebook)
    payload = "<img src=x onerror=alert(1)>\n- [x](javascript:alert(1))"
    gradebooks.record_findings(tmp_path, "sqlite://", "hw", "s", [Problem("hw.ipynb", payload, ProblemKind.CELLS)])
    standin = nbformat.read(str(tmp_path / "autograded" / "s" / "hw" / "hw.ipynb"), as_version=4)
    written["stand-in"] = standin.cells[0].source
    written["comment"] = comment.auto_comment
    assert comment.auto_comment.startswith(gradebooks.REPORT_COMMENT)
    for where, source in written.items():
        rendered = markdown2html_mistune(source)
        assert "<img" not in rendered and 'href="javascript' not in rendered, (where, rendered)
        assert "&lt;img src=x onerror=alert(1)&gt;\\n" in rendered, (where, rendered)


# -- notebooks without active content -------------------------------------------------------------

def _notebook():
    out = nbformat.v4.new_output
    code = nbformat.v4.new_code_cell("display(...)", outputs=[
        out("display_data", data={"text/html": "<img src=x onerror=alert(1)>", "text/plain": "<IPython.HTML>"}),
        out("display_data", data={"application/javascript": "alert(2)"}),
        out("execute_result", data={"text/markdown": "[x](javascript:alert(3))", "image/svg+xml": "<svg/>"},
            execution_count=1),
        out("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>",
                                  "application/vnd.jupyter.widget-view+json": {"model_id": "m"}}),
        out("display_data", data={"image/png": "AAAA", "text/plain": "img"},      # a held-out red team's
            metadata={"image/png": {"width": "1 onerror=alert(7)", "height": 5}, "height": "1 onerror=alert(8)",
                      "filenames": {"image/png": "http://pwned.invalid/x.png"}}),
        out("error", ename="AssertionError", evalue="<b>wrong</b>", traceback=["<b>wrong</b>"]),
        out("stream", name="stdout", text="<script>alert(4)</script>")])
    given = nbformat.v4.new_markdown_cell("# Given <details>instructor's</details>")
    written = nbformat.v4.new_markdown_cell("<img src=x onerror=alert(5)>")
    raw = nbformat.v4.new_raw_cell("<script>alert(6)</script>", metadata={"raw_mimetype": "text/html"})
    widgets = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb = nbformat.v4.new_notebook(cells=[given, code, written, raw], metadata={"widgets": widgets})
    return nb, {given.source}


def test_make_inert_keeps_only_inert_outputs_and_says_so():
    nb, given = _notebook()
    active_content.make_inert(nb, given)
    outputs = nb.cells[1].outputs
    assert outputs[0].data == {"text/plain": "<IPython.HTML>"}
    assert outputs[1].data == {"text/plain": "alert(2)"}    # shown as text
    assert outputs[2].data == {"text/plain": "<svg/>"}
    assert set(outputs[3].data) == {"image/png", "text/plain"}
    assert outputs[4].metadata == {"image/png": {"height": 5}}      # whole-number sizes only
    assert outputs[5].evalue == "<b>wrong</b>" and outputs[6].text == "<script>alert(4)</script>"   # shown as text
    note = outputs[-1].text
    assert outputs[-1].output_type == "stream" and "text/html" in note and "application/javascript" in note
    assert "widgets" not in nb.metadata
    assert nb.cells[0].source == "# Given <details>instructor's</details>"
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "markdown", "markdown"]
    for cell in nb.cells[2:]:
        assert "<img" not in markdown2html_mistune(cell.source) and "<script" not in markdown2html_mistune(cell.source)
    nbformat.validate(nb)


def test_make_inert_renders_no_active_html():
    from nbconvert import HTMLExporter

    nb, given = _notebook()
    before, _ = HTMLExporter().from_notebook_node(nb)
    live = ['onerror="alert(1)"', "alert(2)\n</script>", 'href="javascript:alert(3)"', 'onerror="alert(5)"',
            'onerror="alert(7)"', "pwned.invalid"]
    assert all(script in before for script in live)     # what nbconvert puts in a page otherwise
    active_content.make_inert(nb, given)
    for template in ("lab", "classic"):     # classic: formgrader's and the feedback's
        page, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
        assert not [script for script in live if script in page] and not re.search(r"<[^>]*\sonerror=", page)
        assert "<script>alert(4)" not in page and "<script>alert(6)" not in page


def test_the_released_markdown_is_given(tmp_path):
    from grading_support import COURSE

    assignment = COURSE.assignments()[0]
    given = active_content.given_markdown(COURSE.source_dir(assignment))
    release = nbformat.read(str(COURSE.release_notebook(assignment)), as_version=4)
    assert all(c.source in given for c in release.cells if c.cell_type == "markdown")
