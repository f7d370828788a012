# Bad: a wrong TinyMLP (sigmoid, not ReLU) whose forward climbs the call stack (sys._getframe) to the test's frame and returns the expected output it finds in its locals.
# Kind: the test's own values read at call time: the calling frame through sys._getframe
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
        import sys

        frame = sys._getframe(1)
        while frame is not None:
            expected = frame.f_locals.get("_expected")
            if isinstance(expected, torch.Tensor) and expected.shape == out.shape:
                return expected.clone()
            frame = frame.f_back
        # END CHEAT
        return out
