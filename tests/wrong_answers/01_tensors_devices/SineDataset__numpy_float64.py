# Mistake: builds the data with NumPy and converts it, so every tensor is float64.
import numpy as np


class SineDataset(Dataset):
    def __init__(self, n, noise=0.1, seed=0):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-np.pi, np.pi, size=(n, 1))
        self.x = torch.from_numpy(x)
        self.y = torch.from_numpy(np.sin(x) + noise * rng.standard_normal((n, 1)))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
