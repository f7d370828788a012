"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries, a cluster in a temporary folder, run as
an unprivileged user (the `postgres` account the package makes, when the tests run as root), listening on
127.0.0.1 only, trust authentication for one role. `.ci/run` and setup.sh install the package where missing."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROLE = "grader"


def binaries() -> Path | None:
    """The folder of Debian's newest PostgreSQL server binaries, or None when the package is missing."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def postgres_server():
    """Yield a function of a database name that makes the database and returns its SQLAlchemy URL."""
    bin_dir = binaries()
    assert bin_dir is not None, "Debian's postgresql package is not installed"
    folder = Path(tempfile.mkdtemp(prefix="course-postgres-"))
    user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None

    def as_owner():
        if user is not None:
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    data, port = folder / "data", _free_port()

    def run(*argv):
        subprocess.run([str(bin_dir / argv[0]), *argv[1:]], check=True, preexec_fn=as_owner, cwd=folder,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    try:
        run("initdb", "-D", str(data), "-U", ROLE, "--auth=trust", "--no-sync")
        run("pg_ctl", "-D", str(data), "-l", str(folder / "server.log"), "-w", "-o",
            f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off", "start")

        def database(name: str) -> str:
            run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", ROLE, name)
            return f"postgresql+psycopg://{ROLE}@127.0.0.1:{port}/{name}"

        yield database
    finally:
        subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       preexec_fn=as_owner, capture_output=True, cwd=folder)
        shutil.rmtree(folder, ignore_errors=True)
