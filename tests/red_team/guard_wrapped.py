# Bad: wrong answers, and a cell that wraps the integrity guard: the real guard still runs (and puts the checks back), then the wrapper empties the checks again and drops what the guard found.
# Kind: the guard reachable from the kernel: wrapped
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import re

import helpers.checks as _checks


def _empty_the_checks():
    for name in [n for n in dir(_checks) if n.startswith("check_")]:
        setattr(_checks, name, lambda *args, **kwargs: None)


def _wrap(real):
    def guard(*args, **kwargs):
        token, found = real(*args, **kwargs)
        _empty_the_checks()
        return token, []
    return guard


for _name in [k for k in list(globals()) if re.fullmatch(r"_[0-9a-f]{16}", k)]:
    globals()[_name] = _wrap(globals()[_name])
_empty_the_checks()
# END CHEAT
