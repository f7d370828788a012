"""course.grading.kernel.snippets: the code the grader runs in the student's kernel between cells."""

import gc
import os
import subprocess
import sys

from course.grading.kernel.snippets import FREE_FAILED_FRAMES, FREE_FRAMES, REAP


def test_each_snippet_runs_and_leaves_no_name_behind():
    for snippet in (REAP, FREE_FRAMES, FREE_FAILED_FRAMES):
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


def _held_after(snippet: str, held_mib: int, last: bool) -> bool:
    """In a process whose RLIMIT_DATA is what it holds plus 400 MiB: does a finished frame still hold `held_mib`
    MiB after `snippet` ran? `last`: its exception is the last one, as IPython records a failed cell's
    (`sys.last_value`); else only a traceback kept elsewhere holds the frame."""
    code = f"""
import gc, resource, sys
with open("/proc/self/status") as f:
    base = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmData:"))
resource.setrlimit(resource.RLIMIT_DATA, (base + (400 << 20), resource.RLIM_INFINITY))
class Held:
    def __init__(self):
        self.data = bytearray({held_mib} << 20)
def fail(value):
    raise ValueError(value)
def during():
    held = Held()
    try:
        fail(1)
    except ValueError:
        raise KeyError("raised while handling")
try:
    during()
except KeyError as error:
    kept = error.__context__.__traceback__
    for chain in (error.__traceback__, kept):   # IPython's traceback reads each frame's locals: a dict that holds them
        while chain is not None:
            chain.tb_frame.f_locals
            chain = chain.tb_next
    if {last}:
        sys.last_type, sys.last_value, sys.last_traceback = type(error), error, error.__traceback__
open = len      # a notebook's globals may shadow builtins the snippet uses
exec({snippet!r}, globals())
print(any(type(o) is Held for o in gc.get_objects()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip() == "True"


def test_free_failed_frames_frees_what_the_failed_cell_held_whatever_its_size():
    assert not _held_after(FREE_FAILED_FRAMES, 10, last=True), "a small failed cell's frames were kept"
    assert not _held_after(FREE_FAILED_FRAMES, 300, last=True)


def test_free_failed_frames_sweeps_every_frame_only_near_the_memory_limit():
    assert not _held_after(FREE_FAILED_FRAMES, 300, last=False), "frames holding most of the limit were kept"
    assert _held_after(FREE_FAILED_FRAMES, 10, last=False), "the whole heap was swept far below the limit"
