# Bad: a notebook file cut off half-way: not JSON.
# Expect: not a readable notebook \(NotJSONError
# Zero: all
# %% recipe corrupt
