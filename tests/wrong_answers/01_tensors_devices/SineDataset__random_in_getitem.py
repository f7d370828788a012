# Mistake: draws a fresh random x on every access, so the same index gives different data.
class SineDataset(Dataset):
    def __init__(self, n, noise=0.1, seed=0):
        self.n, self.noise = n, noise
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        x = (torch.rand(1, generator=self.generator) * 2 - 1) * torch.pi
        return x, torch.sin(x) + self.noise * torch.randn(1, generator=self.generator)
