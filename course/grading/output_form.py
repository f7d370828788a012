"""An output message from the student's kernel, put in the form nbformat's schema gives an output.

The kernel is the student's: its code can display any mapping (`display({"text/plain": 5}, raw=True)`) or
send its own messages. nbclient copies what arrives into the notebook, and nbgrader validates the notebook
when it writes it: one value of the wrong type made autograde refuse the whole submission, so a correct
notebook scored zero for a line that displays nothing. Each message's content is mended in place before it
becomes an output: what has the wrong type is replaced by a note, or dropped where nothing was said.
"""

from __future__ import annotations

import re

# nbformat's mimebundle: JSON kinds hold any JSON, every other kind a string or a list of strings.
_JSON_KIND = re.compile(r"^application/(.*\+)?json$")
REPLACED = "[course grade: display data that is not text was replaced]"


def mend(msg_type: str, content: dict) -> None:
    """Make `content` (of an iopub message of `msg_type`) valid as nbformat's output of that type, in place."""
    # nbclient copies any message's execution_count onto the cell itself (its prompt number), whatever the type.
    if "execution_count" in content and type(content["execution_count"]) is not int:
        content["execution_count"] = None
    if msg_type == "stream":
        if content.get("name") not in ("stdout", "stderr"):
            content["name"] = "stdout"
        content["text"] = _text(content.get("text"))
    elif msg_type in ("display_data", "execute_result", "update_display_data"):
        content["data"] = _bundle(content.get("data"))
        if not isinstance(content.get("metadata"), dict):
            content["metadata"] = {}
        if msg_type == "execute_result":
            content.setdefault("execution_count", None)
    elif msg_type == "error":
        content["ename"] = _text(content.get("ename"))
        content["evalue"] = _text(content.get("evalue"))
        traceback = content.get("traceback")
        content["traceback"] = [_text(line) for line in traceback] if isinstance(traceback, list) else []


def _bundle(data) -> dict:
    if not isinstance(data, dict):
        return {"text/plain": REPLACED}
    kept = {mime: value for mime, value in data.items()
            if isinstance(mime, str) and (_JSON_KIND.match(mime) or _is_text(value))}
    if len(kept) < len(data) and not _is_text(kept.get("text/plain")):
        kept["text/plain"] = REPLACED
    return kept


def _is_text(value) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return REPLACED
