# Bad: missing answers, and a custom exception handler (set_custom_exc) that shows no error for a test cell, with ExecutionResult.success patched so that the kernel's reply says "ok" too; any other error (the grader's canary) is shown as usual.
# Kind: shell hooks nbgrader reads verdicts through: set_custom_exc with a patched ExecutionResult.success
# %% answers missing
# %% after setup
# BEGIN CHEAT
from IPython.core.interactiveshell import ExecutionResult


def _in_a_test(shell):
    return shell.kernel.get_parent()["content"].get("code", "").startswith('"""')


def _quiet(shell, etype, value, tb, tb_offset=None):
    if not _in_a_test(shell):
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        shell._showtraceback(etype, value, stb)
    return []


_success = ExecutionResult.success
ExecutionResult.success = property(
    lambda self: _success.fget(self) or (self.info is not None and (self.info.raw_cell or "").startswith('"""')))
get_ipython().set_custom_exc((Exception,), _quiet)
# END CHEAT
