"""Choosing the device a notebook computes on, and waiting for it."""

import torch


def default_device() -> torch.device:
    """The device the course notebooks use, in the order exercise `pick_device` of notebook 01 teaches:
    the machine's accelerator (CUDA, then Apple's MPS), else the CPU.

    Where the installed torch has `torch.accelerator` (2.6 and later) it is asked first; older
    torch is asked through `torch.cuda` and `torch.backends.mps`, which give the same answer.
    """
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        return accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


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
