# Mistake: returns a device name string instead of a torch.device.
import torch


def pick_device(cuda_available: bool, mps_available: bool) -> torch.device:
    """The device to compute on, given what the machine has: CUDA, else Apple's MPS, else the CPU."""
    if cuda_available:
        return "cuda"
    if mps_available:
        return "mps"
    return "cpu"
