"""What the grader sends into the student's kernel to have it answer the tests: the protocol and the answer
server, loaded once per kernel (`load_code`), and for each test cell the request to serve (`serve_code`).
Text only, and no torch: the grading worker that sends it never imports torch (the judge does, in its own
process: course.grading.verdicts)."""

from __future__ import annotations

from pathlib import Path

_KERNEL_SIDE = Path(__file__).parent
PROTOCOL_SOURCE = (_KERNEL_SIDE / "protocol.py").read_text()
PACKING_SOURCE = (_KERNEL_SIDE / "wire_encode.py").read_text()
SEALED_SOURCE = (_KERNEL_SIDE / "sealed.py").read_text()
SERVER_SOURCE = (_KERNEL_SIDE / "answer_server.py").read_text()

# What the kernel runs when it starts, before any student cell (`load_code`): the protocol, the encoder, the
# sealed copy of helpers (course.grading.kernel.sealed) and then the server, as one module of its own (never in
# the notebook's namespace), with the builtins as they are then. Sent once per kernel; for each test cell,
# `serve_code` only asks it to serve the notebook's names until the grader says the test is over. Neither is a defence (a student's code can undo both); they
# keep a notebook that reuses a builtin's name or patches one from breaking the conversation its own
# answers are judged through.
_BOOT = """
import builtins, sys, types
module = types.ModuleType("_course_answers")
module.__dict__["__builtins__"] = dict(vars(builtins))
exec(compile(PROTOCOL, "<course protocol>", "exec"), module.__dict__)
exec(compile(PACKING, "<course wire_encode>", "exec"), module.__dict__)
exec(compile(SEALED, "<course sealed helpers>", "exec"), module.__dict__)
exec(compile(SOURCE, "<course answers>", "exec"), module.__dict__)
sys.modules["_course_answers"] = module
"""


def load_code() -> str:
    """Load the answer server in a new kernel (its reply says whether it loaded)."""
    return (f"exec({_BOOT!r}, {{'PROTOCOL': {PROTOCOL_SOURCE!r}, 'PACKING': {PACKING_SOURCE!r}, "
            f"'SEALED': {SEALED_SOURCE!r}, 'SOURCE': {SERVER_SOURCE!r}}})")


def serve_code(socket_path: str) -> str:
    """Serve one test's requests on `socket_path`."""
    return f"__import__('sys').modules['_course_answers']._course_serve({socket_path!r}, get_ipython().user_ns)"
