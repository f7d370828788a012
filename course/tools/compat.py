"""`course compat TORCH_VERSION`: the course graded and run on another torch, in a virtual environment of its own.

Outside (`compat`): make or reuse `build/compat/<version>/venv`, install that torch (PyPI's build:
the CUDA one, which runs on a CPU) with every other pinned requirement and this checkout
(editable), check where torch came from and that every pin holds, then run the inside part with
the venv's Python. Inside (`check_here`): the same grading the test suite does
(course.submissions.answers: a real `nbgrader autograde` of the reference answers, the untouched
release and the wrong answers of fixtures/wrong_answers/, a sample of them when asked); the
reference submission is the whole reference notebook, so every one of its cells must also have run
without error. Kernels are the venv's own.
"""

import argparse
import fcntl
import json
import os
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

from course.checkout import Course

# The newest torch on PyPI when this was last checked: the test suite runs `course compat` with it.
NEWEST = "2.15.0"

# Pip's settings of this machine (a cap on torch, local mirrors and wheel folders) are left out of
# the venv's install: the torch under test is the package index's, and so is everything else.
_PIP_SETTINGS_LEFT_OUT = ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT", "PIP_NO_INDEX")


def cache_dir(course: Course, version: str) -> Path:
    return course.root / "build" / "compat" / version


def _pins(course: Course) -> list[str]:
    """requirements.txt's pinned lines but torch's (the checkout itself is installed apart)."""
    pins = []
    for line in course.root.joinpath("requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-") and re.split(r"[=<>!~\[ ;]", line)[0].lower() != "torch":
            pins.append(line)
    return pins


def _pip_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PIP_SETTINGS_LEFT_OUT}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def ensure_venv(course: Course, version: str, where: Path, say=print) -> Path:
    """The venv's Python, with torch `version`, the pins and the course installed; reused when it has them.

    One process at a time makes or checks it (tests on two workers may ask at once).
    """
    where.mkdir(parents=True, exist_ok=True)
    with open(where / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_venv(course, version, where, say)


def _ensure_venv(course: Course, version: str, where: Path, say) -> Path:
    python = where / "venv" / "bin" / "python"
    wanted = [f"torch=={version}", *_pins(course), f"-e {course.root}"]
    stamp = where / "installed.txt"
    if python.exists() and stamp.is_file() and stamp.read_text().splitlines() == wanted:
        say(f"course compat: reusing {where / 'venv'}", flush=True)
        return python
    stamp.unlink(missing_ok=True)
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(where / "venv")
    requirements = where / "requirements.txt"
    requirements.write_text("\n".join(wanted) + "\n")
    report = where / "install-report.json"
    say(f"course compat: installing torch {version} and the course into {where / 'venv'} ...", flush=True)
    start = time.perf_counter()
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--report", str(report), "-r", str(requirements)], check=True, env=_pip_env())
    say(f"course compat: installed in {time.perf_counter() - start:.0f} s", flush=True)
    # pip reports what it installed this time: torch only when it was not in the venv already.
    origin = where / "torch-origin.json"
    for item in json.loads(report.read_text()).get("install", []):
        if item["metadata"]["name"].lower() == "torch":
            origin.write_text(json.dumps(item))
    problems = _origin_problems(json.loads(origin.read_text()) if origin.is_file() else None, version)
    if problems:
        raise RuntimeError("; ".join(problems) + f" (remove {where} to start again)")
    # Kernels started from the venv (nbgrader's and nbclient's 'python3') must be the venv's Python.
    subprocess.run([str(python), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3"],
                   check=True, capture_output=True)
    stamp.write_text("\n".join(wanted) + "\n")
    return python


def _origin_problems(torch: dict | None, version: str) -> list[str]:
    """torch (pip's report of installing it) must be `version` as the package index serves it:
    not a local wheel or a local build."""
    if torch is None:
        return [f"pip installed no torch {version}"]
    url = torch.get("download_info", {}).get("url", "")
    got = torch["metadata"]["version"]
    problems = []
    if got.split("+")[0] != version:
        problems.append(f"pip installed torch {got}, not {version}")
    if not url.startswith("https://"):
        problems.append(f"torch {got} came from {url or 'nowhere known'}, not from the package index")
    return problems


def compat(course: Course, version: str, assignments: list[str], sample: int | None, say=print) -> int:
    where = cache_dir(course, version)
    python = ensure_venv(course, version, where, say)
    # MPLCONFIGDIR: the venv's matplotlib keeps its font cache to itself, so a cache it writes
    # (even half-way through an install) never reaches the checkout's notebooks.
    env = dict(os.environ, JUPYTER_PATH=str(where / "venv" / "share" / "jupyter"),
               MPLCONFIGDIR=str(where / "matplotlib"),
               PATH=f"{where / 'venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)
    cmd = [str(python), "-m", "course.tools.compat", "--root", str(course.root), "--torch", version, *assignments]
    if sample is not None:
        cmd += ["--sample", str(sample)]
    return subprocess.run(cmd, cwd=course.root, env=env).returncode


# --- inside the venv ---------------------------------------------------------------------------

def _installed_problems(course: Course, version: str) -> list[str]:
    """This Python's torch, its kernels' Python and the pins, as they should be."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    import torch
    from jupyter_client.kernelspec import KernelSpecManager

    problems = []
    if torch.__version__.split("+")[0] != version:
        problems.append(f"torch here is {torch.__version__}, not {version}")
    kernel = KernelSpecManager().get_kernel_spec("python3").argv[0]
    if os.path.abspath(kernel) != os.path.abspath(sys.executable):   # not resolved: a venv's python is a link
        problems.append(f"the 'python3' kernel runs {kernel}, not this venv's {sys.executable}")
    for pin in _pins(course):
        name, _, want = pin.partition("==")
        name = name.split("[")[0]       # psycopg[binary]: the distribution is psycopg, its extra installed beside
        try:
            have = installed(name)
        except PackageNotFoundError:
            have = None
        if want and have != want:
            problems.append(f"{name} is {have}, requirements.txt pins {want}")
    return problems


def check_here(course: Course, version: str, assignments: list[str], sample: int | None, say=print) -> int:
    """Grade and run every assignment with this Python's torch; print a summary; 0 when all held."""
    import torch

    from course.submissions.answers import grade

    failures = [f"setup: {p}" for p in _installed_problems(course, version)]
    summary = []
    say(f"course compat: torch {torch.__version__} ({sys.executable}), "
        f"kept answers: {'all' if sample is None else f'{sample} per exercise'}", flush=True)
    for assignment in assignments:
        start = time.perf_counter()
        say(f"  {assignment}: autograding ...", flush=True)
        graded = grade(course, assignment, per_exercise=sample)
        score, most = graded.total("reference")
        lean, lean_most = graded.total("reference_lean")
        untouched, _ = graded.total("untouched")
        if most == 0 or score != most:
            failures.append(f"{assignment}: reference answers scored {score:g}/{most:g}\n{graded.failures('reference')}")
        if lean != lean_most:
            failures.append(f"{assignment}: reference answers scored {lean:g}/{lean_most:g} in the lean notebook\n"
                            f"{graded.failures('reference_lean')}")
        if untouched != 0:
            failures.append(f"{assignment}: the untouched release scored {untouched:g}/{most:g}")
        kept = [wrong_id for wrong_id, student in graded.wrong_student.items()
                if _kept_full_marks(graded, wrong_id, student)]
        failures += [f"{assignment}: wrong answer {w} kept full marks" for w in kept]
        lost = [right_id for right_id, student in graded.right_student.items()
                if not _kept_full_marks(graded, right_id, student)]
        failures += [f"{assignment}: correct answer {r} lost points" for r in lost]
        # The reference submission is the reference notebook (release + reference answers; autograde
        # puts the hidden tests back), executed cell by cell: every cell must have run without error.
        ran = _cells_that_raised(graded.autograded / "reference" / assignment / f"{assignment}.ipynb")
        failures += [f"{assignment}: the reference notebook's cell {i} raised {error}" for i, error in ran]
        wrong = len(graded.wrong_student)
        summary.append(f"{assignment:20} reference {score:g}/{most:g}, untouched {untouched:g}, "
                       f"wrong answers losing points {wrong - len(kept)}/{wrong}, right answers keeping full marks "
                       f"{len(graded.right_student) - len(lost)}/{len(graded.right_student)}, reference notebook "
                       f"{'ran without error' if not ran else f'raised in {len(ran)} cell(s)'} "
                       f"({time.perf_counter() - start:.0f} s)")
    say(f"\ncourse compat: torch {torch.__version__}")
    for line in summary:
        say("  " + line)
    for failure in failures:
        say(f"FAILED {failure}", file=sys.stderr)
    say(f"course compat: torch {version}: " + (f"{len(failures)} failure(s)" if failures else "all held"))
    return 1 if failures else 0


def _cells_that_raised(path: Path) -> list[tuple[int, str]]:
    """(index, 'Name: message') of each code cell of an executed notebook that raised, unless tagged so."""
    from course.notebook import cells

    raised = []
    for i, cell in enumerate(cells.read(path).cells):
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", []):
            raised += [(i, f"{o.ename}: {o.evalue}"[:300]) for o in cell.get("outputs", [])
                       if o.output_type == "error"]
    return raised


def _kept_full_marks(graded, answer_id: str, student: str) -> bool:
    exercise = answer_id.split("/", 1)[1].split("__", 1)[0]
    score, most = graded.total(student, graded.test_ids[exercise])
    return score >= most


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.tools.compat",
                                     description="the inside part of `course compat`: run with the venv's Python")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--torch", required=True, help="the torch version this Python must have")
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("assignments", nargs="*")
    args = parser.parse_args(argv)
    course = Course.find(args.root)
    return check_here(course, args.torch, course.resolve(args.assignments), args.sample)


if __name__ == "__main__":
    sys.exit(main())
