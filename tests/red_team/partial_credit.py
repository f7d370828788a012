# Bad: missing answers (as released) that first show the test's full points as the cell's result (sys.displayhook) and then raise: nbgrader reads an execute_result before the error as partial credit.
# Kind: shell hooks nbgrader reads verdicts through: an execute_result shown before an error (partial credit)
# %% answers missing
# %% replace broadcast_shape
def broadcast_shape(shape_a, shape_b):
    """Return the shape that broadcasting `shape_a` with `shape_b` gives, as a tuple of ints.

    Raise ValueError when the two shapes are not broadcastable.
    """
    # YOUR CODE HERE: replace this comment and the `raise` below with your code
    # BEGIN CHEAT
    import sys
    sys.displayhook(2)
    # END CHEAT
    raise NotImplementedError()
# %% replace TinyMLP
class TinyMLP(nn.Module):
    """in_features -> Linear -> ReLU -> Linear -> out_features, with every layer registered."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        # YOUR CODE HERE: replace this comment and the `raise` below with your code
        # BEGIN CHEAT
        import sys
        sys.displayhook(1)
        # END CHEAT
        raise NotImplementedError()

    def forward(self, x):
        # YOUR CODE HERE: replace this comment and the `raise` below with your code
        raise NotImplementedError()
# %% replace predict
def predict(model, x):
    """The outputs of `model` on `x` in eval mode under torch.no_grad(); the model's mode is restored."""
    # YOUR CODE HERE: replace this comment and the `raise` below with your code
    # BEGIN CHEAT
    import sys
    sys.displayhook(3)
    # END CHEAT
    raise NotImplementedError()
