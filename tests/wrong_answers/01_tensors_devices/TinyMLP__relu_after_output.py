# Mistake: puts a ReLU after every linear layer, the output layer included, so the model can never output a negative number.
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(),
            nn.Linear(hidden, out_features), nn.ReLU(),
        )

    def forward(self, x):
        return self.net(x)
