"""Errors made live by the installed torch, for the tests of notebook 06's `classify_error`.

A test states each case as the kind of mismatch it provokes, the operation that provokes it, and the
tensors that operation used (its inputs, and a layer's parameters and buffers). `check_kinds` runs
the operation here, on the torch that runs the test, and hands the student's classifier the exception
it raised together with those tensors. No message is written down anywhere, so the tests read
whatever this torch says. An operation that no longer fails on this torch (an op that gained a
kernel for a dtype, say) leaves nothing to classify: that case is skipped, never counted against
the student.

`used_by(layer, *inputs)` is the tensors a layer's call uses: the inputs, then the layer's
parameters and buffers. `raises(exc_class, message)` is an operation that raises what only a CUDA
build raises, worded as that build prints it, for the cases a CPU cannot make live; the `CUDA_...`
messages are three such, as a CUDA build of torch 2 prints them.
"""

import warnings

from helpers.checks import check_equal

# A CPU batch in a convolution whose weights are on a GPU: two tensor types, no word "device".
CUDA_CONV_CPU_BATCH = ("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same "
                       "or input should be a MKLDNN tensor and weight is a dense tensor")
# A CPU batch in a linear layer on a GPU.
CUDA_LINEAR_CPU_BATCH = ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
                         "cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)")
# torch.linalg.inv of a float16 matrix on a GPU (CUDA autocast has no rule that casts it up).
CUDA_INV_HALF = "linalg.inv: Low precision dtypes not supported. Got Half"


def provoke(operation):
    """The exception `operation()` raises, or None when it runs. PyTorch's warnings are silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            operation()
        except Exception as exc:  # the error is the result here, whatever its class
            return exc
    return None


def used_by(layer, *inputs) -> tuple:
    """The tensors `layer(*inputs)` uses: the inputs, then the layer's parameters and buffers."""
    return (*inputs, *layer.parameters(), *layer.buffers())


def raises(exc_class, message):
    """An operation that raises `exc_class(message)`: an error only a CUDA build makes, as it prints it."""
    def operation():
        raise exc_class(message)
    return operation


def _facts(tensors) -> str:
    return ", ".join(f"{tuple(t.shape)} {str(t.dtype).removeprefix('torch.')} on {t.device}" for t in tensors)


def check_kinds(classify, cases) -> None:
    """`classify(error, tensors) == kind` for the live error of each `(kind, what, operation, tensors)`.

    `what` says in words which operation failed; a failure shows it with the live message and the
    tensors' shapes, dtypes and devices. A case whose operation runs on this torch is skipped:
    `classify` is not called for it.
    """
    __tracebackhide__ = True
    for kind, what, operation, tensors in cases:
        error = provoke(operation)
        if error is not None:
            tensors = tuple(tensors)
            check_equal(classify(error, tensors), kind,
                        f"classify_error on the error of {what} ({type(error).__name__}: {error}; "
                        f"tensors: {_facts(tensors)})")
