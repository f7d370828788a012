"""Choosing the device a notebook computes on."""

import torch


def default_device() -> torch.device:
    """The device the course notebooks use: the first CUDA GPU if there is one, else the CPU.

    Apple's MPS is left out on purpose: the reference outputs are verified on CPU and
    on CUDA only, and a few operations behave differently on MPS.
    """
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def describe_device(device: torch.device) -> str:
    """One line saying what `device` is, e.g. 'cuda:0 (NVIDIA H100, 80.0 GiB)' or 'cpu'."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        index = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        return f"cuda:{index} ({props.name}, {props.total_memory / 2**30:.1f} GiB)"
    return str(device)
