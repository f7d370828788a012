# Mistake: ends forward with a softmax, so the model returns probabilities instead of the last layer's outputs.
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)
