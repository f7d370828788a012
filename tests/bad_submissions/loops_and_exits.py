# Bad: a correct notebook with a cell that never ends and a cell that kills its own kernel with os._exit().
# Expect: cell 4: ran past the time limit for one cell
# Expect: cell 5: the kernel died here
# Zero: none
# %% after setup
while True:
    pass
# %% after setup
import os

os._exit(0)
