# Bad: graded cells tampered with by hand: a test cell deleted (nbgrader grades it put back, so the correct answer keeps its points), a test cell turned into markdown, and a locked test cell edited to check nothing (under a wrong answer).
# Expect: graded cell 'test_predict' was deleted; graded with the original put back
# Expect: graded cell 'test_to_device' was changed from code to markdown
# Expect: locked cell 'test_broadcast_shape' was edited
# Zero: test_broadcast_shape
# %% recipe delete test_predict
# %% recipe retype test_to_device markdown
# %% recipe edit test_broadcast_shape pass
# %% replace broadcast_shape
def broadcast_shape(shape_a, shape_b):
    """Wrong: always (1,)."""
    return (1,)
