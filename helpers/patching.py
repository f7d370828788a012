"""A library function replaced for the length of a probe, under every name it has.

`mock.patch("torch.set_rng_state", spy)` rebinds one name. Code that took the function earlier keeps the
original: `from torch import set_rng_state`, `_restore = torch.set_rng_state`, `load = Optimizer.load_state_dict`,
all ordinary Python. A probe built on the name then misses a call that a right answer makes, or a wrong answer
hides one. `replaced(fn, by)` changes the function object itself, so every name for it calls the stand-in:

    with replaced(torch.set_rng_state, lambda original, state: seen.append(state)):
        fn()                                       # torch.set_rng_state, torch.random.set_rng_state, any alias

`by(original, *args, **kwargs)` runs in place of each call; `original` is a copy of the function as it was.
A function wrapped by a decorator (its `__wrapped__`) is replaced at its innermost layer, which every wrapper
calls. Only Python functions without a closure of their own can be replaced (a TypeError names any other).
"""

import contextlib
import types


def _calls_the_replacement(*args, _course_replacement=None, **kwargs):
    by, original = _course_replacement
    return by(original, *args, **kwargs)


def _innermost(fn):
    while getattr(fn, "__closure__", None) and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    if not isinstance(fn, types.FunctionType) or fn.__closure__:
        raise TypeError(f"replaced() needs a Python function without a closure, got {fn!r}")
    return fn


@contextlib.contextmanager
def replaced(fn, by):
    """Inside, every call of `fn` (by any name) is `by(original, *args, **kwargs)`; afterwards `fn` is as it was."""
    target = _innermost(fn)
    saved = (target.__code__, target.__defaults__, target.__kwdefaults__)
    original = types.FunctionType(target.__code__, target.__globals__, target.__name__, target.__defaults__)
    original.__kwdefaults__ = target.__kwdefaults__
    target.__code__ = _calls_the_replacement.__code__
    target.__defaults__ = None
    target.__kwdefaults__ = {"_course_replacement": (by, original)}
    try:
        yield original
    finally:
        target.__code__, target.__defaults__, target.__kwdefaults__ = saved


def returning(value):
    """A `by` for `replaced` that ignores the call and returns `value`."""
    return lambda original, *args, **kwargs: value
