# Mistake: keeps the layers in a plain Python list, where PyTorch does not look for parameters.
class TinyMLP(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.layers = [nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
