"""A dataset whose items take time to prepare, for notebook 01's measure of parallel loading.

It lives in helpers, not in the notebook, because `DataLoader` workers must import the dataset's
class: on macOS and Windows they start as new processes (spawn), which cannot see a class defined in
a notebook.
"""

import time

import torch
from torch.utils.data import Dataset


class SlowDataset(Dataset):
    """`n` pairs (a 1x8x8 float32 image, an int64 label), each taking `delay` seconds to prepare, as
    reading and decoding a file from disk would. Item `i` is the same every time it is read."""

    def __init__(self, n: int = 256, delay: float = 0.002):
        self.n, self.delay = n, delay

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        time.sleep(self.delay)   # waiting, as on a disk: a worker process waits in parallel
        generator = torch.Generator().manual_seed(i)
        return torch.rand(1, 8, 8, generator=generator), torch.tensor(i % 10)
