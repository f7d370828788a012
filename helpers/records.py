"""Records that a deep copy of a probe shares: a function may use a copy of the model it was given.

`predict` or `accuracy` written as `copy.deepcopy(model).eval()` is correct (the caller's model and its
modes are never touched), so what the copy does must reach the probe the test holds. A probe class lists
its record lists in `_records`; a deep copy of the probe copies everything else as usual and shares those
lists, so a forward pass of the copy is recorded where the test reads it. Pickling (which carries a
probe to the notebook's process under `course grade`) is not affected.
"""

import copy


class SharesRecords:
    """Mixed into a probe's class: `copy.deepcopy` shares the lists named in `_records` with the original."""

    _records: tuple = ()

    def __deepcopy__(self, memo):
        for name in self._records:
            records = self.__dict__[name]
            memo[id(records)] = records         # deepcopy gives back the same list
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        state = copy.deepcopy(self.__dict__, memo)
        if hasattr(type(twin), "__setstate__"):
            twin.__setstate__(state)            # nn.Module's, as a default deepcopy would call
        else:
            twin.__dict__.update(state)
        return twin
