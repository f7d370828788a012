# Mistake: trusts torch.accelerator.current_accelerator() without asking whether one is available (None on a CPU-only machine)
import torch


def pick_device():
    """The best available device: CUDA, then Apple MPS, then CPU, as a torch.device."""
    return torch.accelerator.current_accelerator()
