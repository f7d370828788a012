# Mistake: builds the linear layers with bias=False, so the model has weights but no biases.
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden, bias=False), nn.ReLU(), nn.Linear(hidden, out_features, bias=False),
        )

    def forward(self, x):
        return self.net(x)
