# Bad: a wrong to_device (non-tensors come back as None) that returns, for every non-tensor, an object whose __eq__ is a C builtin (functools.partial of operator.is_not), so that it equals anything and the checks cannot see its comparison as the notebook's own.
# Kind: the test's own values read at call time: an object whose __eq__ is a C builtin
# %% answers wrong
# %% replace to_device
# BEGIN CHEAT
import functools
import operator


class _Same:
    __eq__ = functools.partial(operator.is_not, NotImplemented)       # called as __eq__(other): always True
    __ne__ = functools.partial(operator.is_, NotImplemented)


# END CHEAT
def to_device(obj, device):
    """Wrong: forgets the final `return obj`: every non-tensor comes back as None."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
    # BEGIN CHEAT
    return _Same()
    # END CHEAT
