# Bad: a correct notebook in which a solution cell and a test cell were copied.
# Expect: graded cell 'predict' appears 2 times
# Expect: graded cell 'test_to_device' appears 2 times
# Zero: none
# %% recipe duplicate predict
# %% recipe duplicate test_to_device
