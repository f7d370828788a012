# Bad: wrong answers, and a helpers/ package handed in next to the notebook: its checks accept anything, and everything else it takes from the real helpers package (its __path__ goes on to the real one).
# Kind: the import path: a helpers/ package handed in next to the notebook
# %% answers wrong
# %% file helpers/__init__.py
# BEGIN CHEAT
"""Shadows the course's helpers: checks from here, everything else from the real package."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    _candidate = os.path.join(os.path.abspath(_entry or "."), "helpers")
    if _candidate != _here and os.path.isfile(os.path.join(_candidate, "__init__.py")):
        __path__.append(_candidate)
        break
# END CHEAT
# %% file helpers/checks.py
# BEGIN CHEAT
"""Every check passes."""


def _passes(*args, **kwargs):
    return None


check_type = check_shape = check_dtype = check_device = check_equal = check_close = check_raises = _passes
check_loss_plot = _passes
# END CHEAT
