"""The test's own files, mirrored between the judge and the kernel through the protocol, never a shared path.

A test writes files (a checkpoint for the student's loader) and asks the student's code to write some (a
checkpoint a test then loads with `weights_only=True`). The judge and the kernel each have a folder at the
same path in their own memory-backed /tmp (`Files.root`, the judge's `tempfile.tempdir` during a test). With
every request the judge sends its folders and the files that changed since they last crossed; with every
answer the kernel sends back the files its side changed (`course.grading.kernel.answer_server`, `_Server.files_out`). The
judge writes what comes back only into folders of its own root that already exist, regular files only,
never through a link, and within `MAX_BYTES` and `MAX_FILES` per answer: whatever the kernel claims, it
cannot make the judge write anywhere else, and it never sees a path of the grader's.
"""

from __future__ import annotations

import os
import stat

MAX_FILES = 256             # files one answer may bring back
MAX_BYTES = 48 << 20        # bytes of files one answer may bring back (an answer is at most 64 MiB)
MAX_DEPTH = 8               # folders below the root


class Files:
    """The judge's side of the mirror, rooted at `root` (a folder of the judge's own /tmp)."""

    def __init__(self, root: str):
        self.root = root
        self.synced: dict[str, tuple[int, int]] = {}     # relative path -> (size, mtime) when it last crossed

    def outgoing(self) -> dict:
        """The judge's folders, and the files that changed since they last crossed (with their bytes)."""
        folders, files = [], []
        for rel, kind, signature in _walk(self.root):
            if kind == "dir":
                folders.append(rel)
            elif self.synced.get(rel) != signature:
                with open(os.path.join(self.root, rel), "rb") as f:
                    files.append([rel, f.read()])
                self.synced[rel] = signature
        return {"root": self.root, "dirs": folders, "put": files}

    def incoming(self, files) -> None:
        """Write the files the kernel changed, where they are allowed to go; ignore everything else."""
        if type(files) is not list or len(files) > MAX_FILES:
            return
        total = 0
        for item in files:
            if type(item) is not list or len(item) != 2 or type(item[0]) is not str or type(item[1]) is not bytes:
                continue
            rel, data = item
            total += len(data)
            if total > MAX_BYTES or not _safe(rel):
                continue
            if not _own_folder(self.root, os.path.dirname(rel)):
                continue        # a folder the test does not have (any more): nothing of the test's is there
            path = os.path.join(self.root, rel)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            except OSError:
                continue        # a folder or a link of the judge's own at that name: left as it is
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            info = os.stat(path, follow_symlinks=False)
            self.synced[rel] = (info.st_size, info.st_mtime_ns)


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return 0 < len(parts) <= MAX_DEPTH + 1 and all(p not in ("", ".", "..") and "\0" not in p for p in parts)


def _own_folder(root: str, rel: str) -> bool:
    """Is `rel` an existing folder under `root`, with no link on the way (the judge's own /tmp: only it writes)?"""
    path = root
    for part in [p for p in rel.split("/") if p]:
        path = os.path.join(path, part)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def _walk(root: str):
    """(relative path, "dir" or "file", (size, mtime)) of what lies under `root`: regular files and folders only."""
    for folder, dirs, names in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder.count("/") >= MAX_DEPTH:
            dirs[:] = []
        for name in dirs:
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if not os.path.islink(os.path.join(folder, name)):
                yield rel, "dir", None
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                yield os.path.normpath(os.path.join(rel_folder, name)), "file", (info.st_size, info.st_mtime_ns)
