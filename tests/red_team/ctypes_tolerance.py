# Bad: wrong answers, and a cell that writes 1e9 into the float objects that are check_close's default tolerances (ctypes): the function, its defaults tuple and the floats are the same objects, so nothing looks replaced, and every closeness check with the defaults passes.
# Kind: memory poked through ctypes: a check's default tolerance
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import ctypes

import helpers.checks as _checks

for _tolerance in _checks.check_close.__defaults__:
    ctypes.c_double.from_address(id(_tolerance) + 16).value = 1e9      # ob_refcnt, ob_type, then ob_fval
# END CHEAT
