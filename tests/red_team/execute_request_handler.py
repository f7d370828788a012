# Bad: missing answers, and a replacement for the kernel's execute_request handler (kernel.shell_handlers) that rewrites every test cell into try/except before the kernel runs it.
# Kind: shell hooks nbgrader reads verdicts through: the kernel's execute_request handler
# %% answers missing
# %% after setup
# BEGIN CHEAT
import textwrap

_kernel = get_ipython().kernel
_execute_request = _kernel.shell_handlers["execute_request"]


def _forgiving_request(stream, ident, parent):
    code = parent["content"].get("code", "")
    if code.startswith('"""'):
        parent["content"]["code"] = "try:\n" + textwrap.indent(code, "    ") + "\nexcept Exception:\n    pass\n"
    return _execute_request(stream, ident, parent)


_kernel.shell_handlers["execute_request"] = _forgiving_request
# END CHEAT
