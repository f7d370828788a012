# Mistake: items are 0-d scalars of shape () instead of shape (1,).
class SineDataset(Dataset):
    def __init__(self, n, noise=0.1, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = (torch.rand(n, generator=g) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
