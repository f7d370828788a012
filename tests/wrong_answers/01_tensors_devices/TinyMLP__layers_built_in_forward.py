# Mistake: creates the layers inside forward, so they are new (and unregistered) on every call.
class TinyMLP(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.sizes = (in_features, hidden, out_features)

    def forward(self, x):
        i, h, o = self.sizes
        return nn.Linear(h, o)(torch.relu(nn.Linear(i, h)(x)))
