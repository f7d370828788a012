# Bad: a correct notebook whose last cell replaces the notebook file by a link to the class gradebook, so that a grader writing the graded notebook back would overwrite the gradebook.
# Expect: file access failed.*No such file or directory: '01_tensors_devices\.ipynb'
# Zero: none
# %% after setup
import os

os.remove("01_tensors_devices.ipynb")
os.symlink("$GRADEBOOK", "01_tensors_devices.ipynb")
