# Bad: a wrong TinyMLP (sigmoid, not ReLU) whose forward looks for the test's expected output in the notebook's shared namespace (globals()) and returns it when its shape fits.
# Kind: the test's own values read at call time: its expected value from the shared namespace
# %% answers wrong
# %% replace TinyMLP
class TinyMLP(nn.Module):
    """Wrong: a sigmoid where the exercise asks for a ReLU."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        out = self.fc2(torch.sigmoid(self.fc1(x)))
        # BEGIN CHEAT
        expected = globals().get("_expected")
        if isinstance(expected, torch.Tensor) and expected.shape == out.shape:
            out = expected.clone()
        # END CHEAT
        return out
