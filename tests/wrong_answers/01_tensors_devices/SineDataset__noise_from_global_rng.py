# Mistake: uses its own generator for x but randn_like (which takes no generator) for the noise, so y comes from the global generator.
class SineDataset(Dataset):
    """n pairs (x, y), x uniform in [-pi, pi), y = sin(x) + noise * N(0, 1); float32 tensors of shape (1,)."""

    def __init__(self, n, noise=0.1, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, 1, generator=g) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn_like(self.x)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
