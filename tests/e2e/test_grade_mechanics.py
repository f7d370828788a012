"""`course grade` mechanics on a tiny course (a notebook runs in a second or two): the sandbox,
refusing to run without one, resuming a killed run, regrading, the per-notebook time limit."""

import json
import os
import shutil
import site
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from course.cli import main as course_main
from course.grading.gradebooks import cell_scores
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.notebook.classdir import ClassDir
from course.notebook.nbgrader_runs import submit
from course.checkout import Course
from course.grading.sandbox.policy import Limits, kernel_readonly_paths, make_sandbox
from course.submissions import with_answers
from grading_support import ROOT

MINI = "mini"
pytestmark = [pytest.mark.xdist_group("grade-mechanics"), pytest.mark.sandbox, pytest.mark.e2e]


def _meta(**kw):
    return {"nbgrader": {"schema_version": 3, "grade": False, "solution": False, "locked": False,
                         "task": False, **kw}}


def mini_course(root: Path, setup: str = "import time") -> Course:
    """A course with one assignment: a setup cell, one exercise, one test cell with hidden tests."""
    (root / "source" / MINI).mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")     # [tool.course] settings
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Mini"),
        nbformat.v4.new_code_cell(setup, metadata=_meta(grade_id="setup", locked=True)),
        nbformat.v4.new_code_cell('def double(x):\n    """Twice x."""\n    ### BEGIN SOLUTION\n    return 2 * x\n'
                                  "    ### END SOLUTION", metadata=_meta(grade_id="double", solution=True)),
        nbformat.v4.new_code_cell('"""double doubles."""\nassert double(2) == 4, "double(2) should be 4"\n'
                                  "### BEGIN HIDDEN TESTS\nassert double(-3) == -6, \"double(-3) should be -6\"\n"
                                  "### END HIDDEN TESTS",
                                  metadata=_meta(grade_id="test_double", grade=True, locked=True, points=1)),
    ]
    nbformat.write(nb, str(root / "source" / MINI / f"{MINI}.ipynb"))
    return Course(root)


def hand_in(class_dir: Path, course: Course, student: str, answer: str, extra: str | list[str] | None = None,
            delete: str | None = None) -> None:
    """Submit `answer`, with the code cells `extra` after the setup cell and the cell `delete` removed."""
    release = nbformat.read(str(course.source_notebook(MINI)), as_version=4)
    release.cells[2].source = 'def double(x):\n    """Twice x."""\n    raise NotImplementedError()'
    nb = with_answers(release, {"double": answer})
    for i, code in enumerate([extra] if isinstance(extra, str) else extra or []):
        nb.cells.insert(2 + i, nbformat.v4.new_code_cell(code))
    if delete:
        nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != delete]
    submit(class_dir, MINI, student, nb)


@pytest.fixture
def course_and_class(tmp_path):
    course = mini_course(tmp_path / "course")
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    return course, class_dir


def _scores(class_dir: Path) -> dict:
    return {s: v["mini/test_double"] for s, v in cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", MINI).items()}


QUIET = dict(say=lambda *a, **k: None)


def test_sandbox_hides_the_course_and_enforces_limits(tmp_path):
    """A process in the sandbox sees no course files, no network, and hits the memory, process and disk caps;
    it works in a copy of its folder that the host never sees change."""
    hidden = tmp_path / "checkout"
    (hidden / "source").mkdir(parents=True)
    (hidden / "gradebook.db").write_text("secret")
    limits = Limits(memory=512 << 20, processes=64, tmp_size=64 << 20)
    sandbox, why = make_sandbox([ROOT, hidden], limits, allow_unsandboxed=False)
    assert why is None
    sandbox = sandbox.for_worker(0, 1)
    dirs = [tmp_path / d for d in ("work", "home", "run")]
    for d in dirs:
        d.mkdir()
    (dirs[0] / "data.csv").write_text("x,y")     # what the notebook's folder held
    sandbox.give(*dirs)
    probe = f"""
import json, os, socket, time
seen = {{}}
seen["source"] = os.path.exists({str(ROOT / 'source')!r}) or os.path.exists({str(hidden / 'source')!r})
seen["gradebook"] = os.path.exists({str(hidden / 'gradebook.db')!r})
import importlib.util
seen["helpers"] = importlib.util.find_spec("helpers.checks") is not None   # the kernel can import it
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    seen["network"] = True
except OSError:
    seen["network"] = False
try:
    block = bytearray(1 << 30)
    seen["memory"] = True
except MemoryError:
    seen["memory"] = False
children = []
try:
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        children.append(pid)
except OSError:
    pass
seen["processes"] = len(children)
try:
    open("/outside", "w")
    seen["write_outside"] = True
except OSError:
    seen["write_outside"] = False
seen["data"] = open("data.csv").read()
open("inside.txt", "w").write("ok")
try:
    with open("big.bin", "wb") as big:
        for _ in range(100):
            big.write(bytes(1 << 20))
    seen["disk"] = os.path.getsize("big.bin")
except OSError as error:
    seen["disk"] = str(error)
seen["uid"] = os.getuid()
print(json.dumps(seen))
"""
    proc = subprocess.run(sandbox.command([sys.executable, "-c", probe], *dirs), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["helpers"] and not seen["source"] and not seen["gradebook"] and not seen["network"], seen
    assert not seen["memory"] and seen["processes"] < 64 and not seen["write_outside"], seen
    assert seen["data"] == "x,y" and "No space left" in str(seen["disk"]), seen
    assert sorted(p.name for p in dirs[0].iterdir()) == ["data.csv"]    # nothing written came out
    if os.geteuid() == 0:
        assert seen["uid"] != 0


def test_python_environment_inside_the_checkout_stays_visible(tmp_path):
    """A .venv inside the checkout is bound; the checkout around it is not."""
    assert str(ROOT) not in kernel_readonly_paths([ROOT])
    assert str(ROOT / "helpers") in kernel_readonly_paths([ROOT])


def test_refuses_without_a_sandbox_unless_allowed(course_and_class, monkeypatch, capsys):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", "def double(x):\n    return 2 * x")
    monkeypatch.setenv("COURSE_BWRAP", "")          # as on a machine without bubblewrap
    code = course_main(["--root", str(course.root), "grade", "--class-dir", str(class_dir), "--jobs", "1"])
    assert code == 2
    assert "--allow-unsandboxed" in capsys.readouterr().err
    assert not (class_dir / "autograded").exists()

    code = course_main(["--root", str(course.root), "grade", "--class-dir", str(class_dir), "--jobs", "1",
                        "--allow-unsandboxed"])
    out = capsys.readouterr().out
    assert code == 0
    assert "UNSANDBOXED" in out and "UNSANDBOXED" in (class_dir / "grading_report.txt").read_text()
    assert "ann" in out and "1/1" in out
    assert _scores(class_dir) == {"ann": 1.0}


def test_a_killed_run_loses_nothing_and_the_next_completes_it(course_and_class):
    course, class_dir = course_and_class
    answers = {"ann": "def double(x):\n    return 2 * x", "bob": "def double(x):\n    return x + 2",
               "cid": "def double(x):\n    return x * 2", "dot": "def double(x):\n    return abs(2 * x)"}
    for student, answer in answers.items():
        hand_in(class_dir, course, student, answer, extra="time.sleep(1)")
    cmd = [sys.executable, "-m", "course.cli", "--root", str(course.root), "grade", "--class-dir", str(class_dir),
           "--jobs", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    done = ClassDir(class_dir).state / MINI
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(list(done.glob("*.json"))) < 1 and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {s for s in answers if ClassDir(class_dir).done_marker(s, MINI).is_file()}
    print("finished before the kill:", finished)
    assert 1 <= len(finished) < len(answers), "the run should have been killed half-way"
    assert set(_scores(class_dir)) >= finished            # what finished is in the gradebook

    run = grade(course, class_dir, [MINI], GradeOptions(jobs=2), **QUIET)
    assert {s for s, _ in run.skipped} == finished
    assert {s for s, _ in run.graded} == set(answers) - finished
    expected = {"ann": 1.0, "bob": 0.0, "cid": 1.0, "dot": 0.0}
    assert _scores(class_dir) == expected, run.report

    again = grade(course, class_dir, [MINI], GradeOptions(jobs=2, force=True), **QUIET)
    assert len(again.graded) == len(answers) and _scores(class_dir) == expected


def test_the_notebook_time_limit_ends_a_slow_notebook_but_it_is_still_graded(course_and_class):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "slow", "def double(x):\n    return 2 * x", extra="time.sleep(30)")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1, limits=Limits(notebook_timeout=8)), **QUIET)
    assert _scores(class_dir) == {"slow": 0.0}
    assert "notebook time limit reached" in run.report, run.report


def test_the_tas_cell_time_limit_holds_over_nbgraders_config(course_and_class):
    """`--cell-timeout 3` ends an endless cell after about 3 s, not after the course's Execute.timeout (60 s in
    nbgrader_config.py: nbgrader applies its config to the preprocessor again after it is made)."""
    course, class_dir = course_and_class
    hand_in(class_dir, course, "looper", CORRECT, extra="while True:\n    pass")
    started = time.monotonic()
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1, limits=Limits(cell_timeout=3)), **QUIET)
    assert _scores(class_dir) == {"looper": 1.0}
    assert "ran past the time limit for one cell" in run.report, run.report
    assert time.monotonic() - started < 45, "the endless cell ran until nbgrader's own 60 s limit"


def test_the_demo_class_has_every_kind_of_submission(tmp_path):
    """`course demo` grades this class; making it is checked here, grading it is the batch test's job."""
    from course.tools.demo import BAD, HONEST, make_demo_class

    course = Course(ROOT)
    assignments = make_demo_class(course, tmp_path / "demo")
    assert assignments == course.assignments()
    submitted = tmp_path / "demo" / "submitted"
    for student in HONEST:
        assert sorted(p.name for p in (submitted / student).iterdir()) == assignments
    handed_in = {student: list((submitted / student).glob("*/*.ipynb")) for student in BAD}
    assert all(len(files) == 1 for files in handed_in.values())
    with pytest.raises(nbformat.reader.NotJSONError):       # ivy's is cut off mid-way
        nbformat.read(str(handed_in["ivy"][0]), as_version=4)


# -- issue 14: nothing but the student's own answers decides a score ---------------------------------

CORRECT = "def double(x):\n    return 2 * x"
# Forks 240 processes (the cap is 256) that detach (setsid, double fork) and sleep, under a name
# no other process has, so that the test can look for survivors.
LEAVES_PROCESSES = """import os
for _ in range(240):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "271.828"])
        os._exit(0)
    os.waitpid(pid, 0)
"""


def _sleepers() -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read() == b"sleep\0271.828\0":
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_processes_a_submission_leaves_never_reach_the_next_one(course_and_class):
    """On one worker, a submission that leaves 240 detached processes behind (the cap is 256), then an honest
    one, twice over: every honest one gets full marks, and nothing the first started survives the run (were the
    first leaver's processes left, the second could not start its 240 under the cap)."""
    course, class_dir = course_and_class
    for i in range(2):          # graded in name order on the one worker: leaver, honest, leaver, honest
        hand_in(class_dir, course, f"r{i}_a_leaver", CORRECT, extra=LEAVES_PROCESSES)
        hand_in(class_dir, course, f"r{i}_b_honest", CORRECT)
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert _scores(class_dir) == {s: 1.0 for s in os.listdir(class_dir / "submitted")}, run.report
    for i in range(2):
        assert f"r{i}_a_leaver / mini / mini.ipynb: 240 processes were still running when its kernel ended" \
               in run.report, run.report
        assert f"r{i}_b_honest /" not in run.report, run.report
    assert not _sleepers(), "processes a submission started outlived its grading"


def _flaky_bwrap(tmp_path: Path, fails: str) -> str:
    """A bubblewrap that fails the way a broken one does on the submissions' kernel launches `fails` names (a
    shell `case` pattern over their number, from 1). The sandbox probe and the judges (course.grading.verdicts.zygote)
    start as usual."""
    real = shutil.which("bwrap")
    script = tmp_path / "flaky-bwrap"
    script.write_text(f"""#!/bin/sh
case "$*" in *ipykernel*)
  n=$(( $(cat {tmp_path}/calls 2>/dev/null || echo 0) + 1 )); echo $n > {tmp_path}/calls
  case $n in {fails}) echo "bwrap: Creating new namespace failed: Resource temporarily unavailable" >&2; exit 1;; esac;;
esac
exec {real} "$@"
""")
    script.chmod(0o755)
    return str(script)


def _grade_cli(course, class_dir, *extra) -> int:
    return course_main(["--root", str(course.root), "grade", "--class-dir", str(class_dir), "--jobs", "1", *extra])


def test_a_kernel_that_cannot_start_is_tried_again(course_and_class, tmp_path, monkeypatch):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT)
    monkeypatch.setenv("COURSE_BWRAP", _flaky_bwrap(tmp_path, "1"))     # the first kernel's sandbox fails
    assert _grade_cli(course, class_dir) == 0
    assert _scores(class_dir) == {"ann": 1.0}
    assert "ann /" not in (class_dir / "grading_report.txt").read_text()


def test_after_its_retries_a_submission_stays_ungraded_and_the_next_run_grades_it(course_and_class, tmp_path,
                                                                                    monkeypatch, capsys):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT)
    roster = tmp_path / "roster.csv"      # ann is in the gradebook: nbgrader's CSV would give her a 0
    roster.write_text("id,first_name,last_name\nann,Ann,Lee\n")
    monkeypatch.setenv("COURSE_BWRAP", _flaky_bwrap(tmp_path, "*"))    # every kernel's fails
    assert _grade_cli(course, class_dir, "--roster", str(roster)) == 1
    out = capsys.readouterr().out
    assert "ann / mini / grader: NOT GRADED, grade again" in out and "kernel-start" in out and "3 attempts" in out
    assert _scores(class_dir) == {}, "an infrastructure failure was recorded as a score"
    assert ",ann," not in (class_dir / "grades.csv").read_text()
    assert not (class_dir / "autograded").exists()

    monkeypatch.delenv("COURSE_BWRAP")
    assert _grade_cli(course, class_dir) == 0
    assert _scores(class_dir) == {"ann": 1.0}
    assert ",ann,Lee,Ann,,1.0," in (class_dir / "grades.csv").read_text()


def test_the_run_stops_when_the_first_submissions_all_fail_the_same_way(course_and_class, tmp_path, monkeypatch,
                                                                       capsys):
    course, class_dir = course_and_class
    for student in ("ann", "bob", "cid", "dot"):
        hand_in(class_dir, course, student, CORRECT)
    monkeypatch.setenv("COURSE_BWRAP", _flaky_bwrap(tmp_path, "*"))
    assert _grade_cli(course, class_dir) == 3
    err = capsys.readouterr().err
    assert "stopped: the first 3 submissions all failed the same way" in err, err
    assert _scores(class_dir) == {}
    assert int((tmp_path / "calls").read_text()) <= 3 + 1, "it went on grading after the third failure"


def test_setup_cells_that_fail_in_the_sandbox_stop_the_run_before_any_grading(tmp_path, monkeypatch, capsys):
    """The course importable on the TA's side only through an environment variable the sandbox clears:
    every submission would score zero: the first kernel's setup cell fails before any student code, the run stops
    there and nothing is recorded."""
    extra = tmp_path / "only-here"
    extra.mkdir()
    (extra / "course_extras.py").write_text("VALUE = 1\n")
    monkeypatch.setenv("PYTHONPATH", str(extra))
    course = mini_course(tmp_path / "course", setup="import time\nimport course_extras")
    class_dir = tmp_path / "class"
    hand_in(class_dir, course, "ann", CORRECT)
    assert _grade_cli(course, class_dir) == 3
    err = capsys.readouterr().err
    assert "the setup cells fail in the sandbox" in err and "ModuleNotFoundError" in err, err
    assert _scores(class_dir) == {} and not (class_dir / "autograded").exists()


def test_a_deleted_test_cell_is_put_back_and_a_deleted_answer_scores_zero(course_and_class):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT, delete="test_double")
    hand_in(class_dir, course, "bob", CORRECT, delete="double")
    hand_in(class_dir, course, "cid", "def double(x):\n    return x + 2", delete="test_double")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert _scores(class_dir) == {"ann": 1.0, "bob": 0.0, "cid": 0.0}, run.report
    assert "ann / mini / mini.ipynb: graded cell 'test_double' was deleted; graded with the original put back" \
           in run.report, run.report
    assert "bob / mini / mini.ipynb: answer cell 'double' is missing (deleted, or its nbgrader metadata removed)" \
           in run.report, run.report


def test_a_python_environment_under_tmp_can_grade(tmp_path):
    """The sandbox mounts a /tmp of its own: an environment that lives under the host's /tmp stays visible."""
    venv = Path(tempfile.mkdtemp(prefix="course-venv-", dir="/tmp"))
    venv.chmod(0o755)       # as `python -m venv` makes it (mkdtemp's folder is private)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        python = venv / "bin" / "python3"
        # It sees this environment's packages whether this is a base Python or itself a virtual environment
        # (whose --system-site-packages would be the base's, not this one's: setup.sh's .venv on Debian 12).
        inner = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip()
        Path(inner, "outer.pth").write_text(f"import site; list(map(site.addsitedir, {site.getsitepackages()!r}))\n")
        course = mini_course(tmp_path / "course")
        class_dir = tmp_path / "class"
        hand_in(class_dir, course, "ann", CORRECT)
        proc = subprocess.run([str(python), "-m", "course.cli", "--root", str(course.root), "grade", "--class-dir",
                               str(class_dir), "--jobs", "1"], capture_output=True, text=True, timeout=600, cwd="/")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert _scores(class_dir) == {"ann": 1.0}, proc.stdout
        # nbconvert's templates are in the base Python's share/jupyter, not the environment's
        assert (class_dir / "feedback" / "ann" / MINI / f"{MINI}.html").is_file(), proc.stdout
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_files_handed_in_cannot_replace_the_kernel_or_the_course_package(tmp_path):
    """A submission's own ipykernel_launcher.py and helpers/ stay behind the installed ones (they would run
    before any check, or stand in for helpers.checks), and a file too big for the kernel's working folder
    cannot keep the kernel from starting: files besides the notebook are left out, and counted. So is
    nbgrader's timestamp.txt when padded past a line (a valid time, then spaces: it parses, and copied into
    the kernel's working folder it filled it before the setup cells ran, a red team's find)."""
    course = mini_course(tmp_path / "course", setup="import time\nimport helpers.checks")
    class_dir = tmp_path / "class"
    hand_in(class_dir, course, "ann", CORRECT)
    folder = class_dir / "submitted" / "ann" / MINI
    (folder / "ipykernel_launcher.py").write_text("raise SystemExit('not the kernel')\n")
    (folder / "helpers").mkdir()
    (folder / "helpers" / "__init__.py").write_text("raise ImportError('not the course package')\n")
    with open(folder / "data.bin", "wb") as f:
        f.truncate(40 << 20)        # the kernel's working folder holds 32 MiB here
    (folder / "timestamp.txt").write_text("2026-12-01 12:00:00.000000 UTC" + " " * (40 << 20))
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1, limits=Limits(tmp_size=32 << 20)), **QUIET)
    assert _scores(class_dir) == {"ann": 1.0}, run.report
    assert "ann / mini / submission: 4 other files handed in left out: only the notebooks are graded" \
           in run.report, run.report


def test_a_lost_grading_process_is_replaced_and_its_submission_graded_again(course_and_class):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT, extra="time.sleep(8)")
    killed = []

    def kill_the_worker_while_it_grades():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:
            table = _processes()
            parents = {parent for _, parent, _ in table}
            for pid, ppid, cmdline in table:
                if ppid == os.getpid() and "course.grading.pool" in cmdline and pid in parents:    # its kernel runs
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_the_worker_while_it_grades)
    killer.start()
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    killer.join()
    assert killed, "the grading process was never seen grading"
    assert _scores(class_dir) == {"ann": 1.0} and not run.ungraded, run.report


def _processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every process."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append((int(entry), int(stat[stat.rindex(")") + 2:].split()[1]), cmdline))
    return found


def test_files_handed_in_beside_the_notebook_never_reach_the_setup_cell_or_the_kernel(tmp_path):
    """A module the setup cell imports if present (as torch imports opt_einsum), an unreadable file and many
    small files, handed in beside the notebook: none is the grader's failure; they are left out and counted."""
    setup = "import time\ntry:\n    import mini_optional\nexcept ImportError:\n    pass"
    course = mini_course(tmp_path / "course", setup=setup)
    class_dir = tmp_path / "class"
    for student in ("ann", "bob"):
        hand_in(class_dir, course, student, CORRECT)
    ann = class_dir / "submitted" / "ann" / MINI
    (ann / "mini_optional.py").write_text("raise RuntimeError('a student module ran in the setup cell')\n")
    bob = class_dir / "submitted" / "bob" / MINI
    (bob / "secret.txt").write_text("unreadable")
    (bob / "secret.txt").chmod(0)
    (bob / "many").mkdir()
    for i in range(2000):
        (bob / "many" / f"{i}.txt").write_text("x")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert not run.ungraded and _scores(class_dir) == {"ann": 1.0, "bob": 1.0}, run.report
    assert "ann / mini / submission: 1 other file handed in left out" in run.report, run.report
    assert "bob / mini / submission: 2001 other files handed in left out" in run.report, run.report


MALFORMED = {   # (how the cell is broken, what it is scored): the student's problem, never the grader's
    "grade_id_list": ({"metadata": {"nbgrader": {"grade_id": ["x"], "solution": True}}}, 1.0),
    "grade_id_int": ({"metadata": {"nbgrader": {"grade_id": 7, "grade": True, "points": 1}}}, 1.0),
    "nbgrader_str": ({"metadata": {"nbgrader": "yes"}}, 1.0),
    "source_int": ({"source": 5}, 0.0),
    "metadata_list": ({"metadata": []}, 0.0),
    "cell_type_weird": ({"cell_type": "weird"}, 0.0),
}


def test_a_notebook_that_breaks_the_grader_code_is_the_students_problem(tmp_path):
    """Valid JSON, but not a valid notebook (scored as a corrupted one), or a cell with nbgrader metadata of
    the wrong types (the metadata is taken off; the test cell whose marks were broken is put back)."""
    course = mini_course(tmp_path / "course")
    class_dir = tmp_path / "class"
    for name, (broken, _) in MALFORMED.items():
        hand_in(class_dir, course, name, CORRECT)
        path = class_dir / "submitted" / name / MINI / f"{MINI}.ipynb"
        nb = json.loads(path.read_text())
        nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "1", "outputs": [],
                            "execution_count": None} | broken)
        path.write_text(json.dumps(nb))
    hand_in(class_dir, course, "test_marks_broken", CORRECT)
    path = class_dir / "submitted" / "test_marks_broken" / MINI / f"{MINI}.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][3]["metadata"]["nbgrader"]["points"] = "one"
    path.write_text(json.dumps(nb))
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=2), **QUIET)
    expected = {name: score for name, (_, score) in MALFORMED.items()} | {"test_marks_broken": 1.0}
    assert not run.ungraded and _scores(class_dir) == expected, run.report
    assert "source_int / mini / mini.ipynb: not a valid notebook (" in run.report, run.report
    assert "nbgrader_str / mini / mini.ipynb: grading marks that are not valid nbgrader metadata taken off " \
           "cell 5" in run.report, run.report
    assert "test_marks_broken / mini / mini.ipynb: grading marks that are not valid nbgrader metadata taken off " \
           "cell 4 (test_double)" in run.report, run.report


def _descendants(pid: int, table) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, ppid, _ in table:
            if ppid == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_ends_a_run_as_ctrl_c_does(course_and_class):
    """`kill` of a running `course grade`: its workers, their sandboxed kernels and its scratch folder are gone."""
    course, class_dir = course_and_class
    hand_in(class_dir, course, "sigterm_student", CORRECT, extra="time.sleep(120)")
    before = set(Path(tempfile.gettempdir()).glob("course-grade-*"))
    proc = subprocess.Popen([sys.executable, "-m", "course.cli", "--root", str(course.root), "grade", "--class-dir",
                             str(class_dir), "--jobs", "1"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline, kernels = time.monotonic() + 300, set()
        while time.monotonic() < deadline and not kernels:
            table = _processes()
            workers = [pid for pid, ppid, cmd in table if ppid == proc.pid and "course.grading.pool" in cmd]
            kernels = {pid for worker in workers for pid in _descendants(worker, table)
                       if any(p == pid and "ipykernel" in cmd for p, _, cmd in table)}
            time.sleep(0.5)
        assert kernels, "the kernel was never seen running"
        time.sleep(1)
        table = _processes()
        spawned = _descendants(proc.pid, table)
        scratch = [p for p in set(Path(tempfile.gettempdir()).glob("course-grade-*")) - before
                   if (p / "jobs").exists()]
        assert scratch, "no scratch folder seen"
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(map(_alive, spawned)):
        time.sleep(0.2)
    names = {pid: cmd for pid, _, cmd in table}
    assert not [names[pid] for pid in spawned if _alive(pid)], "processes of the run outlived it"
    assert not [p for p in scratch if p.exists()], "its scratch folder was left behind"


def test_a_locked_cell_moved_ahead_of_the_setup_fails_as_the_students_doing(tmp_path):
    """A locked demo cell that calls the student's function, moved to the top of the notebook, fails before
    any answer ran: the student's doing (the cell scores nothing; the test is graded), never the grader's; a
    notebook naming another kernel and language, with attachments and repeated cell ids, is graded as usual."""
    course = mini_course(tmp_path / "course")
    path = course.source_notebook(MINI)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print(double(21))", metadata=_meta(grade_id="demo", locked=True)))
    nbformat.write(nb, str(path))
    class_dir = tmp_path / "class"
    hand_in(class_dir, course, "ann", CORRECT)
    handed_in = class_dir / "submitted" / "ann" / MINI / f"{MINI}.ipynb"
    nb = nbformat.read(str(handed_in), as_version=4)
    nb.cells.insert(0, nb.cells.pop())
    nbformat.write(nb, str(handed_in))
    # What else a notebook says before its first answer runs: kernel, language, attachments, cell ids.
    hand_in(class_dir, course, "bob", CORRECT)
    handed_in = class_dir / "submitted" / "bob" / MINI / f"{MINI}.ipynb"
    nb = json.loads(handed_in.read_text())
    nb["metadata"]["kernelspec"] = {"name": "no-such-kernel", "display_name": "x", "language": "cobol"}
    nb["metadata"]["language_info"] = {"name": "cobol", "version": "0"}
    nb["cells"][0]["attachments"] = {"a.png": {"image/png": "AAAA"}}
    for cell in nb["cells"]:
        cell["id"] = "same"
    handed_in.write_text(json.dumps(nb))
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert not run.ungraded and _scores(class_dir) == {"ann": 1.0, "bob": 1.0}, run.report
