"""course.grading.kernel.snippets: the code the grader runs in the student's kernel between cells."""

import gc
import os
import subprocess
import sys

from course.grading.kernel.snippets import FREE_FRAMES, REAP


def test_each_snippet_runs_and_leaves_no_name_behind():
    for snippet in (REAP, FREE_FRAMES):
        namespace = {"__name__": "__main__"}
        exec(snippet, namespace)
        assert not {name for name in namespace if not name.startswith("__")}, set(namespace)


def test_reap_collects_a_finished_child():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while True:     # finished, not yet reaped: a zombie
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().split(") ")[-1].startswith("Z"):
                break
    exec(REAP, {"__name__": "__main__"})
    assert not os.path.exists(f"/proc/{child.pid}")
    child.returncode = 0       # reaped by the snippet, not by Popen


def test_free_frames_frees_what_a_finished_frame_held():
    class Held:
        pass

    def fail(value):
        raise ValueError(value)

    try:
        fail(Held())
    except ValueError as error:
        kept = error.__traceback__        # a traceback keeps the frame, and the frame keeps the object
    assert any(type(o) is Held for o in gc.get_objects())
    exec(FREE_FRAMES, {"__name__": "__main__"})
    assert not any(type(o) is Held for o in gc.get_objects())
    del kept
