# Bad: wrong answers, and a cell that edits the private copy of the builtins the integrity guard runs with: its setattr puts nothing back and its sorted() reports nothing; then the checks are emptied.
# Kind: the guard reachable from the kernel: its private builtins edited
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import re

import helpers.checks as _checks

for _name in [k for k in list(globals()) if re.fullmatch(r"_[0-9a-f]{16}", k)]:
    _private = globals()[_name].__globals__["__builtins__"]
    _private["setattr"] = lambda *args: None
    _private["sorted"] = lambda *args, **kwargs: []
for _check in [n for n in dir(_checks) if n.startswith("check_")]:
    setattr(_checks, _check, lambda *args, **kwargs: None)
# END CHEAT
