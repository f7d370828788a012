# Mistake: checks MPS before CUDA.
import torch


def pick_device(cuda_available: bool, mps_available: bool) -> torch.device:
    """The device to compute on, given what the machine has: CUDA, else Apple's MPS, else the CPU."""
    if mps_available:
        return torch.device("mps")
    if cuda_available:
        return torch.device("cuda")
    return torch.device("cpu")
