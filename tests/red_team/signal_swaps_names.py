# Bad: wrong answers, and a signal handler on a fast timer (signal.setitimer): it runs between the kernel's bytecodes, and while a test cell is running the checks (in helpers.checks and as the test imported them) are empty ones; between cells, when the grader looks, they are the real ones again.
# Kind: code that runs while a test runs: a signal handler (signal.setitimer) that swaps the test's names
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import signal

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


def _swap(signum, frame, namespace=get_ipython().user_ns):
    testing = _running_a_test(frame)
    for name, real in _real.items():
        setattr(_checks, name, _noop if testing else real)
        if namespace.get(name) in (real, _noop):
            namespace[name] = _noop if testing else real


signal.signal(signal.SIGALRM, _swap)
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
# END CHEAT
