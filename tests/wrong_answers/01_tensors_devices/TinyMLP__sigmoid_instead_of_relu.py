# Mistake: uses a sigmoid between the layers where the exercise asks for a ReLU.
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))
