"""Probes of the notebook's own process: where a test asks about state that is global to it.

Most tests judge what a student's function returns and what it did to its arguments. A few
ask about the process itself (a global forward hook left registered). When `course grade`
runs a test outside the notebook's process (see course/grading/verdicts/), a probe marked with
`asks_notebook` is called in the notebook's process, where that state is, and its answer
comes back as data; run anywhere else (a student's own kernel), it simply runs.
"""

import functools

from helpers.records import check_unchanged

# Set by course grade while it runs a test outside the notebook: ask(probe, args, kwargs).
ask = None
# Set by course grade at the same time: a one-way pipe out of the notebook's sandbox to where the test runs
# (course/grading/verdicts/notes.py): `listener.path` is where code in the notebook's process, or any process
# it starts, writes a line; the test calls `listener.expect(line)` before and `listener.heard(line)` after.
listener = None


def asks_notebook(probe):
    """Mark `probe` (a function of helpers, taking and returning data) as asking the notebook's process. Where it
    runs, it fails (helpers.records.ProbeChanged) if the course's probe classes, or the probes among its arguments,
    were changed before it ran or while it ran (helpers/records.py)."""

    @functools.wraps(probe)
    def asking(*args, **kwargs):
        if ask is not None:
            return ask(asking, args, kwargs)
        check_unchanged(args)
        result = probe(*args, **kwargs)
        check_unchanged(args)
        return result

    return asking
