# Bad: nothing dishonest: a correct notebook whose scratch cell names a variable `list`, as beginners do. The grader's own checks must not trip over it; test_to_device, which uses the builtin list, fails here exactly as it does under plain nbgrader.
# Zero: test_to_device
# %% after setup
list = [3, 1, 2]
print(list)
