# Bad: an assignment folder with no notebook in it, only a stray file.
# Expect: notebook missing: scored zero
# Zero: all
# %% recipe missing
