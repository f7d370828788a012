# Bad: a correct notebook with extra cells that exhaust memory, fork without end, exit, print 30 MB, reach for the network, read the hidden tests and the solutions, and write the gradebook; one answer prints a PyTorch warning.
# Expect: cell 4: memory limit reached
# Expect: cell 5: memory limit reached
# Expect: cell 6: (process limit reached|left \d+ processes running|the kernel's processes together reached its memory limit)
# Expect: cell 7: called sys\.exit\(\)
# Expect: cell 8: printed too much; 29\.0 MB of output dropped
# Expect: cell 9: tried to use the network
# Expect: cell 10: file access failed.*source/01_tensors_devices
# Expect: cell 11: file access failed.*notebooks/01_tensors_devices
# Expect: cell 12: file access failed.*unable to open database
# Zero: none
# %% after setup
huge = torch.ones(1 << 40)            # 4 TiB at once
# %% after setup
def grow():
    blocks = []
    while True:
        blocks.append(bytearray(64 << 20))

grow()
# %% after setup
import os

while True:
    os.fork()
# %% after setup
import sys

sys.exit(1)
# %% after setup
print("x" * (30 << 20))
# %% after setup
import socket

socket.create_connection(("pypi.org", 443), timeout=5)
# %% after setup
print(open("$SOURCE_NOTEBOOK").read())
# %% after setup
print(open("$REFERENCE_NOTEBOOK").read())
# %% after setup
import sqlite3

sqlite3.connect("$GRADEBOOK").execute("UPDATE grade SET auto_score = 100")
# %% replace to_device
def to_device(obj, device):
    """A copy of `obj` (tensor, or nested list / tuple / dict) with every tensor moved to `device`."""
    if isinstance(obj, torch.Tensor):
        return torch.tensor(obj).to(device)   # copy-constructing a tensor: PyTorch warns on stderr
    if isinstance(obj, dict):
        return {key: to_device(value, device) for key, value in obj.items()}
    if isinstance(obj, list):
        return [to_device(item, device) for item in obj]
    if isinstance(obj, tuple):
        return tuple(to_device(item, device) for item in obj)
    return obj
