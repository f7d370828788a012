# Bad: a wrong TinyMLP (sigmoid, not ReLU) whose forward raises and catches an exception to reach the test's frame through the traceback, and returns the expected output it finds in the test's locals.
# Kind: the test's own values read at call time: the test's frame through a raised exception's traceback
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
        try:
            raise LookupError
        except LookupError as error:
            frame = error.__traceback__.tb_frame
        while frame is not None:
            expected = frame.f_locals.get("_expected")
            if isinstance(expected, torch.Tensor) and expected.shape == out.shape:
                return expected.clone()
            frame = frame.f_back
        # END CHEAT
        return out
