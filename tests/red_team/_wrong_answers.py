# Wrong answers that the fixtures share (`# %% answers wrong` in a fixture stands for all of them), so that
# many fixtures share one "answers alone" twin. Each is a realistic mistake from fixtures/wrong_answers/ that
# raises nothing in the tests (a cheat that silences the checks can then earn every point).
# %% replace broadcast_shape
def broadcast_shape(shape_a, shape_b):
    """Wrong: takes the larger size at every position and never refuses."""
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    return tuple(max(x, y) for x, y in zip(a, b))
# %% replace to_device
def to_device(obj, device):
    """Wrong: forgets the final `return obj`: every non-tensor comes back as None."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
# %% replace TinyMLP
class TinyMLP(nn.Module):
    """Wrong: a sigmoid where the exercise asks for a ReLU."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        out = self.fc2(torch.sigmoid(self.fc1(x)))
        return out
# %% replace predict
def predict(model, x):
    """Wrong: turns off gradients but never switches to eval mode."""
    with torch.no_grad():
        out = model(x)
    return out
# %% replace SineDataset
class SineDataset(Dataset):
    """Wrong: the generator is never seeded, so every seed gives the same data."""

    def __init__(self, n, noise=0.1, seed=0):
        generator = torch.Generator()
        self.x = (torch.rand(n, 1, generator=generator) * 2 - 1) * torch.pi
        self.y = torch.sin(self.x) + noise * torch.randn(n, 1, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]
