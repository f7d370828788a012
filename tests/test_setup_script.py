"""setup.sh, the README's first command, on stand-in machines: what it installs, how, and that it
always ends in `course demo`.

The system commands it calls (apt-get, sudo, id, python3) are stand-ins that record their
arguments, so the script's decisions are checked without touching this machine.
"""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run_setup(tmp_path: Path, *, apt: bool, bwrap: bool, uid: int) -> list[str]:
    """Run setup.sh with only stand-in commands on PATH; returns the calls they recorded."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy2(ROOT / "setup.sh", checkout / "setup.sh")
    record = f'echo "$(basename "$0") $*" >> {log}'
    for tool in ("dirname", "basename"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    _stub(bin_dir, "id", f"echo {uid}")
    _stub(bin_dir, "python3", record)           # pip and course demo: recorded, not run
    _stub(bin_dir, "sudo", record + '\n"$@"')
    if apt:
        # Installing bubblewrap puts bwrap on PATH, as the real package does.
        _stub(bin_dir, "apt-get",
              record + f'\n[[ " $* " == *" bubblewrap "* ]] && ln -sf /bin/true {bin_dir}/bwrap; true')
    if bwrap:
        os.symlink("/bin/true", bin_dir / "bwrap")
    run = subprocess.run(["/bin/bash", str(checkout / "setup.sh"), "--jobs", "2"], capture_output=True, text=True,
                         env={"PATH": str(bin_dir), "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr
    return log.read_text().splitlines() if log.exists() else []


def _installs(calls: list[str]) -> str:
    return " ".join(c for c in calls if "install -y" in c and "chromium" not in c.split()[-1])


@pytest.mark.parametrize("uid", [0, 1000])
def test_fresh_debian_gets_bubblewrap_then_the_course_then_the_demo(tmp_path, uid):
    calls = run_setup(tmp_path, apt=True, bwrap=False, uid=uid)
    installs = _installs(calls)
    assert "bubblewrap" in installs
    assert installs.startswith("sudo apt-get") == (uid != 0), calls   # sudo only when not root
    assert calls[-2:] == ["python3 -m pip install -r requirements.txt", "python3 -m course.cli demo --jobs 2"]


def test_nothing_from_apt_when_bubblewrap_is_there(tmp_path):
    calls = run_setup(tmp_path, apt=True, bwrap=True, uid=0)
    assert "bubblewrap" not in _installs(calls)
    assert calls[-1] == "python3 -m course.cli demo --jobs 2"


def test_without_apt_the_demo_says_what_to_do(tmp_path):
    calls = run_setup(tmp_path, apt=False, bwrap=False, uid=501)
    assert calls == ["python3 -m pip install -r requirements.txt", "python3 -m course.cli demo --jobs 2"]
