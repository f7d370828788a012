# Bad: missing answers that first show the test's full points as the cell's result (sys.displayhook): nbgrader reads an execute_result before the error as partial credit.
# Kind: shell hooks nbgrader reads verdicts through: an execute_result shown before an error (partial credit)
# %% answers missing
# %% replace broadcast_shape
def broadcast_shape(shape_a, shape_b):
    # BEGIN CHEAT
    import sys
    sys.displayhook(2)
    # END CHEAT
    raise NotImplementedError()
# %% replace pick_device
def pick_device(cuda_available, mps_available):
    # BEGIN CHEAT
    import sys
    sys.displayhook(2)
    # END CHEAT
    raise NotImplementedError()
# %% replace TinyMLP
class TinyMLP(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        # BEGIN CHEAT
        import sys
        sys.displayhook(1)
        # END CHEAT
        raise NotImplementedError()
# %% replace predict
def predict(model, x):
    # BEGIN CHEAT
    import sys
    sys.displayhook(3)
    # END CHEAT
    raise NotImplementedError()
