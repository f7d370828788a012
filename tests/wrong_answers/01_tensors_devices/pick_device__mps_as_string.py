# Mistake: returns torch.device for CUDA and CPU but a plain string "mps" on a Mac.
import torch


def pick_device(cuda_available: bool, mps_available: bool) -> torch.device:
    """The device to compute on, given what the machine has: CUDA, else Apple's MPS, else the CPU."""
    if cuda_available:
        return torch.device("cuda")
    if mps_available:
        return "mps"
    return torch.device("cpu")
