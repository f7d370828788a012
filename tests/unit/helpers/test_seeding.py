"""helpers.seeding: one seed repeats every random stream."""

import numpy as np
import torch

from helpers import seeding


def test_seed_everything_repeats_every_stream():
    import random


    g1 = seeding.seed_everything(3)
    first = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g1).item())
    g2 = seeding.seed_everything(3)
    second = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g2).item())
    assert first == second
    seeding.seed_everything(4)
    assert torch.rand(1).item() != first[2]
