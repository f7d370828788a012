# Mistake: returns torch.device for CUDA and CPU but a plain string "mps" on a Mac.
import torch


def pick_device():
    """The best available device: CUDA, then Apple MPS, then CPU, as a torch.device."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return "mps"
    return torch.device("cpu")
