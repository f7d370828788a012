# Mistake: the common one-liner, which never considers Apple's MPS.
import torch


def pick_device(cuda_available: bool, mps_available: bool) -> torch.device:
    """The device to compute on, given what the machine has: CUDA, else Apple's MPS, else the CPU."""
    return torch.device("cuda" if cuda_available else "cpu")
