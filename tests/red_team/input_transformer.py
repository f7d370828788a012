# Bad: missing answers, and an IPython input transformer that wraps every test cell in try/except; it is handed to IPython inside functools.partial, which the guard takes for library code.
# Kind: shell hooks nbgrader reads verdicts through: input transformer (in functools.partial)
# %% answers missing
# %% after setup
# BEGIN CHEAT
import functools
import textwrap


def _forgive(prefix, lines):
    if lines and lines[0].startswith(prefix):
        body = textwrap.indent("".join(lines), "    ")
        return ["try:\n"] + (body + "\nexcept Exception:\n    pass\n").splitlines(True)
    return lines


get_ipython().input_transformers_post.append(functools.partial(_forgive, '"""'))
# END CHEAT
