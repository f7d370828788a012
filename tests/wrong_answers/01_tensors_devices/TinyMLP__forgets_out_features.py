# Mistake: the last layer maps to `hidden` again instead of `out_features`.
class TinyMLP(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden))

    def forward(self, x):
        return self.net(x)
