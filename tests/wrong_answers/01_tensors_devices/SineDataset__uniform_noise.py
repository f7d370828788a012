# Mistake: torch.rand instead of torch.randn for the noise: uniform in [0, noise), not Gaussian with mean 0.
class SineDataset(Dataset):
    """n pairs (x, y), x uniform in [-pi, pi), y = sin(x) + noise * N(0, 1); float32 tensors of shape (1,)."""

    def __init__(self, n, noise=0.1, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, 1, generator=g) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.rand(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
