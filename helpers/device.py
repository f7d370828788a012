"""Choosing the device a notebook computes on, and waiting for it."""

import torch


# The order notebook 01 states (CUDA, else Apple's MPS, else the CPU), as (device kind, the question that tells
# whether this machine has it); the CPU, which every machine has, is the fallback. The questions are
# looked up when asked, so a test can give them other answers.
PREFERENCE = (
    ("cuda", lambda: torch.cuda.is_available()),
    ("mps", lambda: torch.backends.mps.is_available()),
)


def default_device() -> torch.device:
    """The device the course notebooks use: the first kind in `PREFERENCE` this machine has, else the CPU."""
    kind = next((kind for kind, present in PREFERENCE if present()), "cpu")
    return torch.device(kind)


def synchronize(device: torch.device) -> None:
    """Wait until every kernel queued on `device` has finished (nothing to wait for on the CPU).

    Accelerators run kernels asynchronously: a timer read without waiting measures only the launch.
    """
    device = torch.device(device)
    if device.type == "cpu":
        return
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "synchronize"):
        accelerator.synchronize(device)
    elif device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def describe_device(device: torch.device) -> str:
    """One line saying what `device` is, e.g. 'cuda:0 (NVIDIA H100, 80.0 GiB)' or 'cpu'."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        index = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        return f"cuda:{index} ({props.name}, {props.total_memory / 2**30:.1f} GiB)"
    return str(device)
