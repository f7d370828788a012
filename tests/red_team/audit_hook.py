# Bad: wrong answers, and an audit hook (sys.addaudithook, which nothing can remove): when a test cell is compiled it empties the checks; when the grader's next call is compiled it puts them back.
# Kind: code that runs while a test runs: sys.addaudithook
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import re
import sys

import helpers.checks as _checks

_real = {n: getattr(_checks, n) for n in dir(_checks) if n.startswith("check_")}
_noop = lambda *args, **kwargs: None  # noqa: E731


def _audit(event, args, namespace=get_ipython().user_ns):
    if event != "compile" or not args:
        return
    source = args[0].decode(errors="replace") if isinstance(args[0], bytes) else args[0]
    if not isinstance(source, str):
        return
    if source.startswith('"""'):                                   # a test cell
        for name in _real:
            setattr(_checks, name, _noop)
    elif re.match(r"_[0-9a-f]{16}\(", source) or source.startswith("assert"):    # the grader's guard or canary
        for name, real in _real.items():
            setattr(_checks, name, real)
            if namespace.get(name) is _noop:
                namespace[name] = real


sys.addaudithook(_audit)
# END CHEAT
