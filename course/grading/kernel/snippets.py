"""Small pieces of code the grader runs in the student's kernel between cells. The kernel cannot import
`course`, so each goes as the text of a function, a call to it, and its name deleted again (`call_once`):
nothing stays behind in the notebook's namespace. Real functions here, so that they are linted and tested."""

import inspect


def _course_reap():
    """Reap the kernel's finished children: a zombie still counts against the sandbox's process limit."""
    import os
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


def _course_free_frames():
    """Free what the frames of finished calls still hold (a traceback keeps a failed cell's tensors alive)."""
    import gc
    import inspect
    import types
    from builtins import RuntimeError, isinstance     # the notebook's globals may shadow builtins
    suspended = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
    for frame in [o for o in gc.get_objects() if isinstance(o, types.FrameType)]:
        if not frame.f_code.co_flags & suspended:
            try:
                frame.clear()
                frame.f_locals  # noqa: B018 - re-syncs the locals dict IPython made, dropping what clear() freed
            except RuntimeError:    # still running
                pass
    gc.collect()


def _course_free_failed_frames():
    """After a failed cell: free what the frames of its traceback hold (the exception it raised and those it was
    raised during), whatever their size; then, when the process still holds more than half of what RLIMIT_DATA
    lets it, every finished frame (`_course_free_frames`, a sweep of the heap: only then)."""
    import resource
    import sys
    from builtins import BaseException, RuntimeError, getattr, id, int, isinstance, next, open, set
    seen, failed = set(), [getattr(sys, "last_value", None)]
    while failed:
        error = failed.pop()
        if not isinstance(error, BaseException) or id(error) in seen:
            continue
        seen.add(id(error))
        failed += [error.__context__, error.__cause__]
        tb = error.__traceback__
        while tb is not None:
            try:
                tb.tb_frame.clear()
                tb.tb_frame.f_locals  # noqa: B018 - re-syncs the locals dict IPython's traceback made
            except RuntimeError:    # still running
                pass
            tb = tb.tb_next
    limit = resource.getrlimit(resource.RLIMIT_DATA)[0]
    with open("/proc/self/status") as f:
        held = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:")), 0)
    if limit != resource.RLIM_INFINITY and held > limit // 2:
        _course_free_frames()


def call_once(function, *needs) -> str:
    """The text that defines `function` (and the functions it `needs`), calls it once and deletes every name."""
    defined = (*needs, function)
    return ("".join(f"{inspect.getsource(f)}\n" for f in defined) + f"{function.__name__}()\n"
            + "".join(f"del {f.__name__}\n" for f in defined))


REAP = call_once(_course_reap)
FREE_FRAMES = call_once(_course_free_frames)
FREE_FAILED_FRAMES = call_once(_course_free_failed_frames, _course_free_frames)
