# Mistake: applies the ReLU to the input before the first layer instead of between the two layers.
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(self.fc1(torch.relu(x)))
