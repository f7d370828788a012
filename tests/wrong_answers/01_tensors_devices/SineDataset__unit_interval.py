# Mistake: x drawn from [0, 1) (torch.rand as is) instead of [-pi, pi).
class SineDataset(Dataset):
    def __init__(self, n, noise=0.1, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.rand(n, 1, generator=g)
        self.y = torch.sin(self.x) + noise * torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
