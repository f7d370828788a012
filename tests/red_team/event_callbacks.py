# Bad: wrong answers, and two IPython event callbacks (in functools.partial): pre_run_cell empties the checks when a test cell starts, post_run_cell puts them back before the grader looks.
# Kind: shell hooks nbgrader reads verdicts through: event callbacks (pre_run_cell, post_run_cell)
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import functools

import helpers.checks as _checks

_real = {n: getattr(_checks, n) for n in dir(_checks) if n.startswith("check_")}
_noop = lambda *args, **kwargs: None  # noqa: E731


def _before(namespace, info):
    if (info.raw_cell or "").startswith('"""'):
        for name in _real:
            setattr(_checks, name, _noop)


def _after(namespace, result):
    for name, real in _real.items():
        setattr(_checks, name, real)
        if namespace.get(name) is _noop:
            namespace[name] = real


get_ipython().events.register("pre_run_cell", functools.partial(_before, get_ipython().user_ns))
get_ipython().events.register("post_run_cell", functools.partial(_after, get_ipython().user_ns))
# END CHEAT
