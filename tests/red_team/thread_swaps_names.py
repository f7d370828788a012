# Bad: wrong answers, and a background thread that watches the kernel's main thread: while it runs a test cell, the checks (in helpers.checks and as the test imported them) are empty ones; between cells, when the grader looks, they are the real ones again.
# Kind: code that runs while a test runs: a thread that swaps the test's names
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import sys
import threading
import time

import helpers.checks as _checks

_real = {n: getattr(_checks, n) for n in dir(_checks) if n.startswith("check_")}
_noop = lambda *args, **kwargs: None  # noqa: E731


def _running_a_test(frame):
    while frame is not None:
        if frame.f_code.co_name in ("execute_request", "do_execute", "run_cell", "_run_cell"):
            code = frame.f_locals.get("code", frame.f_locals.get("raw_cell"))
            if isinstance(code, str) and code.startswith('"""'):
                return True
        frame = frame.f_back
    return False


def _swap(namespace, main):
    while True:
        testing = _running_a_test(sys._current_frames().get(main))
        for name, real in _real.items():
            setattr(_checks, name, _noop if testing else real)
            if namespace.get(name) in (real, _noop):
                namespace[name] = _noop if testing else real
        time.sleep(0.0002)


sys.setswitchinterval(1e-5)
threading.Thread(target=_swap, args=(get_ipython().user_ns, threading.main_thread().ident), daemon=True).start()
# END CHEAT
