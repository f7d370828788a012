"""Making a notebook give the same numbers on every run."""

import random

import numpy as np
import torch


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's, NumPy's and PyTorch's random number generators.

    Returns a `torch.Generator` seeded with the same value, for code that should draw
    its own random stream (a DataLoader's shuffling, say) without disturbing the global one.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator
