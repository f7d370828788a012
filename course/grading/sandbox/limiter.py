"""Runs inside the sandbox, before the kernel (or the judge): set the limits, drop to the sandbox uid,
forbid privilege gains, fill the empty working folder and home from their read-only seeds, then become
the kernel. Plain Python that needs nothing beyond the interpreter the kernel uses anyway: the sandbox
runs this file's text with `python -c SPEC ARGV...` (see `policy.LIMITER`)."""

import ctypes
import json
import os
import resource
import shutil
import sys


def main() -> None:
    spec = json.loads(sys.argv[1])
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    for seed, target in spec.get("seeds", []):     # entry by entry: the mount point itself is not ours
        for name in os.listdir(seed):
            src, dst = os.path.join(seed, name), os.path.join(target, name)
            if os.path.isdir(src) and not os.path.islink(src):
                shutil.copytree(src, dst, symlinks=True)
            else:
                shutil.copy2(src, dst, follow_symlinks=False)
    os.execv(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
