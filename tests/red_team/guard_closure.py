# Bad: wrong answers, and a cell that edits the integrity guard's closure: its remembered copy of helpers.checks now holds empty checks, which it then takes for the real ones.
# Kind: the guard reachable from the kernel: its closure edited
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import re

import helpers.checks as _checks

_noop = lambda *args, **kwargs: None  # noqa: E731
for _name in [k for k in list(globals()) if re.fullmatch(r"_[0-9a-f]{16}", k)]:
    _guard = globals()[_name]
    _cells = dict(zip(_guard.__code__.co_freevars, _guard.__closure__))
    _remembered = _cells["modules"].cell_contents
    for _module_name, (_module, _snapshot) in _remembered.items():
        if _module is _checks:
            for _check in [n for n in _snapshot if n.startswith("check_")]:
                _snapshot[_check] = _noop
                setattr(_checks, _check, _noop)
# END CHEAT
