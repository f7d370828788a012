"""The sandbox every student kernel runs in: bubblewrap namespaces plus resource limits.

What a student kernel sees and may do:

- the file system: the system's /usr and /etc, the Python installation, the `helpers`
  package, read-only; its working folder (what the notebook's folder holds besides the
  notebooks), a home and /tmp, each a memory-backed file system of `Limits.tmp_size`,
  so that a student filling them takes at most that much of the machine's memory and
  none of its disk, and nothing written there outlives the kernel. The course's source/, notebooks/, the
  gradebook, the grader's own code and other students' submissions are simply not there;
- no network (a network namespace with only a loopback device), its own process ids;
- rlimits: memory (address space that can be written: RLIMIT_DATA), processes and
  threads (RLIMIT_NPROC), file size, open files, no core dumps.

RLIMIT_NPROC never applies to root, so when the grader runs as root the kernel is
started as an unprivileged uid of its own: a fresh one for every kernel (from a block of
uids that belongs to the worker process), so that processes a submission leaves behind
never count against the next kernel's process cap, and a fork bomb in one sandbox cannot
starve another, in this run or in another run on the machine. `no_new_privs` keeps
setuid programs from giving anything back.

No trace of one kernel reaches the next: when a kernel ends, the grader kills pid 1 of
its pid namespace, which takes every process of the sandbox with it (the kernel's
children, double forks and `setsid` escapes included), waits until bubblewrap reports
that the namespace is empty, and then kills whatever still runs under the kernel's uid
and waits until none is left (`end_sandbox`, `clear_uid`). Its /tmp, home and working
folder are memory-backed mounts of that namespace and go with it.

The kernel talks to the grader over unix sockets (ZeroMQ's ipc transport) in a folder
bound into the sandbox, because a TCP port on the host's loopback is unreachable from
a separate network namespace.
"""

# The public face; the parts live beside it (policy, kernel, host, processes, limiter).
