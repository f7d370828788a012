# Bad: wrong answers, and a dict subclass put in as the notebook's namespace (shell.user_ns): a test cell that looks up a check gets an empty one, while the grader, looking up the same names, gets the real ones.
# Kind: code that runs while a test runs: a dict subclass installed as the user namespace
# %% answers wrong
# %% after setup
# BEGIN CHEAT
import linecache
import sys

_noop = lambda *args, **kwargs: None  # noqa: E731


class _Namespace(dict):
    def __init__(self, module_globals):
        super().__init__(module_globals)
        self._globals = module_globals

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if key.startswith("check_") and callable(value):
            caller = sys._getframe(1)
            if linecache.getline(caller.f_code.co_filename, 1).startswith('"""'):
                return _noop
        return value

    def __setitem__(self, key, value):      # functions defined in cells still find each other
        dict.__setitem__(self, key, value)
        self._globals[key] = value


get_ipython().user_ns = _Namespace(get_ipython().user_ns)
# END CHEAT
