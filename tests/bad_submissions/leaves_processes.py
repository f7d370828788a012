# Bad: a correct notebook with a cell that starts 200 processes which detach from the kernel (setsid, double fork) and sleep on after it ends: with one uid per worker they would take the next kernel's process budget.
# Expect: 200 processes were still running when its kernel ended; all were stopped
# Zero: none
# %% after setup
import os

started = 0
while started < 200:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "120"])
        os._exit(0)
    os.waitpid(pid, 0)
    started += 1
