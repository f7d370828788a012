# Bad: nothing dishonest: a correct notebook whose scratch cell names a variable `list`, as beginners do, and whose SineDataset cell starts with `from numpy import *` (which rebinds bool, sum, max, ...). The tests run in the grader with the real builtins, but the notebook's own to_device looks `list` up in the notebook, as under plain nbgrader: it fails there, and only test_to_device scores zero.
# Zero: test_to_device
# %% after setup
list = [3, 1, 2]
print(list)
# %% replace SineDataset
from numpy import *


class SineDataset(Dataset):
    """n pairs (x, y), x uniform in [-pi, pi), y = sin(x) + noise * N(0, 1); float32 tensors of shape (1,)."""

    def __init__(self, n, noise=0.1, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, 1, generator=generator) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, 1, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
