"""A folder as plain data and back: how a job's files reach a cluster's worker and its results come home
(`course.grading.cluster`), with no shared file system.

A bundle is a dict of bytes: {"dirs": [name, ...], "files": {name: content}, "links": {name: target}}, each name
a relative path as bytes (any file name a student's folder holds, UTF-8 or not). Links travel as their target's
text and are made last, after every folder and file, so that nothing unpacking a bundle writes through one;
nothing here ever follows one. Special files (fifos, sockets, devices) do not travel. A bundle that is not one
(a name that climbs out, a wrong type, more than `limit` bytes) raises `BundleError`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class BundleError(ValueError):
    """What was handed over is not a bundle, or would not fit where it goes."""


def pack(folder: Path | str, limit: int) -> dict:
    """`folder`'s folders, regular files and links, relative to it; BundleError past `limit` bytes."""
    root = os.fsencode(folder)
    dirs, files, links, size = [], {}, {}, 0
    for top, subdirs, names in os.walk(root, followlinks=False):
        rel_top = os.path.relpath(top, root)
        for name in subdirs + names:
            path = os.path.join(top, name)
            rel = os.path.normpath(os.path.join(rel_top, name))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                links[rel] = os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                dirs.append(rel)
            elif stat.S_ISREG(info.st_mode):
                size += info.st_size
                if size > limit:
                    raise BundleError(f"{os.fsdecode(root)} holds more than {limit} bytes")
                files[rel] = _read_regular(path)
    return {"dirs": dirs, "files": files, "links": links}


def unpack(bundle, folder: Path | str, limit: int) -> None:
    """Make `bundle`'s folders, files and links under `folder` (an empty folder of the caller's)."""
    if type(bundle) is not dict or set(bundle) != {"dirs", "files", "links"}:
        raise BundleError("a bundle is a dict of dirs, files and links")
    dirs, files, links = bundle["dirs"], bundle["files"], bundle["links"]
    if type(dirs) is not list or type(files) is not dict or type(links) is not dict:
        raise BundleError("a bundle's dirs are a list, its files and links dicts")
    if sum(len(c) if type(c) is bytes else limit + 1 for c in files.values()) > limit:
        raise BundleError(f"a bundle of more than {limit} bytes, or a file that is not bytes")
    root = os.fsencode(folder)
    for name in sorted(dirs, key=_safe_name):        # parents before children
        os.makedirs(os.path.join(root, _safe_name(name)), exist_ok=True)
    for name, content in files.items():
        path = os.path.join(root, _safe_name(name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _refuse_links_above(root, path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "wb") as out:
            out.write(content)
    for name, target in links.items():
        if type(target) is not bytes or b"\0" in target:
            raise BundleError("a link's target is bytes")
        path = os.path.join(root, _safe_name(name))
        _refuse_links_above(root, path)     # before anything is made: a folder "under" a link would be made there
        if not os.path.isdir(os.path.dirname(path)):
            raise BundleError(f"a link in a folder the bundle does not hold: {name!r:.80}")
        try:
            os.symlink(target, path)
        except FileExistsError:
            raise BundleError(f"a link where the bundle has something else: {name!r:.80}") from None


def _safe_name(name) -> bytes:
    """`name` if it is a relative path that stays below its folder."""
    if type(name) is not bytes or not name or b"\0" in name or name.startswith(b"/"):
        raise BundleError(f"not a relative name: {name!r:.80}")
    parts = name.split(b"/")
    if any(part in (b"", b".", b"..") for part in parts):
        raise BundleError(f"a name that climbs out or is not plain: {name!r:.80}")
    return name


def _refuse_links_above(root: bytes, path: bytes) -> None:
    """No folder between `root` and `path` is a link (one made by the bundle itself, say)."""
    parent = os.path.dirname(path)
    while len(parent) > len(root):
        if os.path.islink(parent):
            raise BundleError(f"a name under a link: {path[len(root):]!r:.80}")
        parent = os.path.dirname(parent)


def _read_regular(path: bytes) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with open(fd, "rb") as f:
        return f.read()
