# Bad: a correct notebook handed in under another name.
# Expect: notebook missing \(handed in instead: my_work.ipynb; renamed\?\)
# Zero: all
# %% recipe rename my_work.ipynb
