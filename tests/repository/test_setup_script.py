"""setup.sh, the README's first command, on stand-in machines: what it installs, how, and that it
always ends in `course demo`.

The system commands it calls (apt-get, sudo, id, python3) are stand-ins that record their
arguments, so the script's decisions are checked without touching this machine. The stand-in python3
says whether it refuses pip installs (PEP 668) as asked, and `python3 -m venv DIR` makes a stand-in
DIR/bin/python; test.sh, the README's second command, must then use the same Python.
"""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from grading_support import ROOT



def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run_setup(tmp_path: Path, *, apt: bool, bwrap: bool, uid: int, managed: bool = False, venv: str = "",
              script: str = "setup.sh") -> list[str]:
    """Run `script` (setup.sh, or test.sh after it) with only stand-in commands on PATH; returns the calls
    they recorded. `managed`: python3 refuses pip installs; `venv`: the active virtual environment."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    checkout = tmp_path / "checkout"
    if not bin_dir.exists():
        bin_dir.mkdir()
        (checkout / "scripts").mkdir(parents=True)
        for name in ("setup.sh", "test.sh", "scripts/python"):
            shutil.copy2(ROOT / name, checkout / name)
    for tool in ("bash", "dirname", "basename", "cat", "chmod", "mkdir", "pwd"):
        if not (bin_dir / tool).exists():
            os.symlink(shutil.which(tool), bin_dir / tool)
    record = f'echo "$(basename "$0") $*" >> {log}'
    _stub(bin_dir, "id", f"echo {uid}")
    # python3: its probes (-c) answer as asked; pip and course demo are recorded, not run.
    _stub(bin_dir, "python3", f"""case "$1" in
  -c) [[ "$2" == *EXTERNALLY-MANAGED* ]] && exit {0 if managed else 1}; exit 0;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin"; cat "$0" > "$3/bin/python"; chmod +x "$3/bin/python"; fi;;
esac
{record}""")
    _stub(bin_dir, "sudo", record + '\n"$@"')
    if apt:
        # Installing bubblewrap puts bwrap on PATH, as the real package does.
        _stub(bin_dir, "apt-get",
              record + f'\n[[ " $* " == *" bubblewrap "* ]] && ln -sf /bin/true {bin_dir}/bwrap; true')
    if bwrap and not (bin_dir / "bwrap").exists():
        os.symlink("/bin/true", bin_dir / "bwrap")
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)} | ({"VIRTUAL_ENV": venv} if venv else {})
    args = ["--jobs", "2"] if script == "setup.sh" else ["-m", "not slow"]
    run = subprocess.run(["/bin/bash", str(checkout / script), *args], capture_output=True, text=True, env=env)
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


def test_where_python3_refuses_pip_installs_both_commands_use_a_venv_in_the_checkout(tmp_path):
    calls = run_setup(tmp_path, apt=True, bwrap=True, uid=0, managed=True)
    assert calls[-3:] == ["python3 -m venv " + str(tmp_path / "checkout" / ".venv"),
                          "python -m pip install -r requirements.txt", "python -m course.cli demo --jobs 2"]
    assert "python3-venv" not in _installs(calls)       # the stand-in python3 has ensurepip
    tested = run_setup(tmp_path, apt=True, bwrap=True, uid=0, managed=True, script="test.sh")
    assert tested[len(calls):] == ["python -m pytest -m not slow"]      # .venv's python, made above


def test_in_an_active_venv_both_commands_use_it_even_where_the_system_python_is_managed(tmp_path):
    calls = run_setup(tmp_path, apt=True, bwrap=True, uid=0, managed=True, venv=str(tmp_path / "mine"))
    assert calls[-2:] == ["python3 -m pip install -r requirements.txt", "python3 -m course.cli demo --jobs 2"]
    assert not any("venv" in c for c in calls) and not (tmp_path / "checkout" / ".venv").exists()
    tested = run_setup(tmp_path, apt=True, bwrap=True, uid=0, managed=True, venv=str(tmp_path / "mine"),
                       script="test.sh")
    assert tested[len(calls):] == ["python3 -m pytest -m not slow"]
