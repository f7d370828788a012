# Mistake: asks torch.backends.mps.is_built() (was PyTorch compiled with MPS?) instead of is_available() (can this machine use it?).
import torch


def pick_device():
    """The best available device: CUDA, then Apple MPS, then CPU, as a torch.device."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_built():
        return torch.device("mps")
    return torch.device("cpu")
