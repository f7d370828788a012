# Bad: wrong answers, and a cell that finds the integrity guard in the notebook's namespace, learns its token by calling it, puts a fake that answers "nothing replaced" in its place, then empties the checks.
# Kind: the guard reachable from the kernel: found in the user namespace, token learned, replaced
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import re

import helpers.checks as _checks

for _name in [k for k in list(globals()) if re.fullmatch(r"_[0-9a-f]{16}", k)]:
    _token, _ = globals()[_name]([], False, [])
    globals()[_name] = lambda *args, _token=_token, **kwargs: (_token, [])
for _check in [n for n in dir(_checks) if n.startswith("check_")]:
    setattr(_checks, _check, lambda *args, **kwargs: None)
# END CHEAT
