# Mistake: ignores its arguments and asks torch about the machine it runs on, so it cannot decide for any other machine.
import torch


def pick_device(cuda_available: bool, mps_available: bool) -> torch.device:
    """The device to compute on, given what the machine has: CUDA, else Apple's MPS, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
