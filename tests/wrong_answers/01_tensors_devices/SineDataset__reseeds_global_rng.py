# Mistake: seeds PyTorch's global generator, silently resetting everyone else's randomness.
class SineDataset(Dataset):
    def __init__(self, n, noise=0.1, seed=0):
        torch.manual_seed(seed)
        self.x = (torch.rand(n, 1) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
