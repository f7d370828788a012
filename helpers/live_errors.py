"""Errors made live by the installed torch, for the tests of notebook 06's `classify_error`.

A test states each case as the kind of mismatch it provokes and the operation that provokes it.
`check_kinds` runs the operation here, on the torch that runs the test, and checks the student's
classifier on the exception it raises. No message is written down anywhere, so the tests read
whatever this torch says. An operation that no longer fails on this torch (an op that gained a
kernel for a dtype, say) leaves nothing to classify: that case is skipped, never counted against
the student.
"""

import warnings

from helpers.checks import check_equal


def provoke(operation):
    """The exception `operation()` raises, or None when it runs. PyTorch's warnings are silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            operation()
        except Exception as exc:  # the error is the result here, whatever its class
            return exc
    return None


def check_kinds(classify, cases) -> None:
    """`classify(error) == kind` for the live error of each `(kind, what, operation)` in `cases`.

    `what` says in words which operation failed; a failure shows it with the live message.
    A case whose operation runs on this torch is skipped: `classify` is not called for it.
    """
    __tracebackhide__ = True
    for kind, what, operation in cases:
        error = provoke(operation)
        if error is not None:
            check_equal(classify(error), kind,
                        f"classify_error on the error of {what} ({type(error).__name__}: {error})")
