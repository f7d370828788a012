"""Plain serial `nbgrader autograde` against `course grade --jobs N` on the same class.

    python benchmarks/grade_benchmark.py [--min-submissions 12] [--jobs 2] [--rounds 3] [--per-notebook] [--keep DIR]

Makes a class from the course's own notebooks (for every assignment in source/: the
reference answers, half of them, the untouched release, realistic wrong answers from
fixtures/wrong_answers/, in turn, at least two each and --min-submissions in all), registers
the assignments with `nbgrader generate_assignment` in two copies of it (not timed: a TA
has done that when releasing the assignments), measures how much faster N CPU-bound
processes run at once than one after another on this machine (the ceiling of any
parallel speed-up here), then times

  1. plain nbgrader: `nbgrader autograde ASSIGNMENT` for each assignment, one after another;
  2. `course grade --jobs N`, as a TA runs it (sandboxed, with feedback and the CSV);

checks that both gradebooks hold the same score for every graded cell, and prints the
speed ratio. With --rounds N it times the two N times, one after the other in turn (plain, ours,
plain, ours, ...), and prints every round's ratio and their median: on a shared virtual machine one
run's ratio moved between 1.61x and 1.80x from one quarter hour to the next with the same code.
With --per-notebook, last, one notebook at a time, it grades the
reference answers of each assignment with `course grade --jobs 1` and executes the same
notebook alone (nbclient, no nbgrader, no sandbox): the difference is the per-notebook
grading overhead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from course.notebook import cells  # noqa: E402
from course.submissions.answers import first_wrong_answers  # noqa: E402
from course.grading.gradebooks import cell_scores  # noqa: E402
from course.notebook.nbgrader_runs import run_nbgrader, scratch_course, submit  # noqa: E402
from course.checkout import Course  # noqa: E402
from course.submissions import reference_answers, with_answers  # noqa: E402

KINDS = ("full", "half", "blank", "wrong")


def _burn(n: int) -> None:
    x = 0
    for i in range(n):
        x += i * i


def parallel_ceiling(processes: int, rounds: int = 3, n: int = 10_000_000) -> float:
    """How much faster `processes` CPU-bound processes run at once than one after the other.

    The most any parallel grader can gain on this machine: virtual CPUs shared with other
    machines often give less than their number.
    """
    import multiprocessing as mp

    def timed(k: int) -> float:
        procs = [mp.Process(target=_burn, args=(n,)) for _ in range(k)]
        started = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        return time.perf_counter() - started

    ratios = [processes * timed(1) / timed(processes) for _ in range(rounds)]
    return sorted(ratios)[len(ratios) // 2]


def make_class(course: Course, folder: Path, min_submissions: int) -> list[tuple[str, str]]:
    assignments = course.assignments()
    per = max(2, -(-min_submissions // len(assignments)))
    made = []
    for assignment in assignments:
        release = cells.read(course.release_notebook(assignment))
        answers = reference_answers(cells.read(course.source_notebook(assignment)))
        half = dict(list(answers.items())[: max(1, len(answers) // 2)])
        versions = {"full": with_answers(release, answers), "half": with_answers(release, half),
                    "blank": release,
                    "wrong": with_answers(release, answers | first_wrong_answers(course, assignment))}
        for k in range(per):
            kind = KINDS[k % len(KINDS)]
            student = f"{kind}{k // len(KINDS) or ''}"
            submit(folder, assignment, student, versions[kind])
            made.append((student, assignment))
    return made


def register(course: Course, folder: Path, assignments: list[str]) -> None:
    """What a TA did when releasing: nbgrader generate_assignment into the class gradebook."""
    scratch = scratch_course(course, assignments, folder / ".register")
    for assignment in assignments:
        run_nbgrader(scratch, "generate_assignment", assignment, "--force",
                     db_url=f"sqlite:///{folder / 'gradebook.db'}")
    shutil.rmtree(scratch)


def plain_nbgrader(folder: Path, assignments: list[str]) -> float:
    shutil.copy2(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    started = time.perf_counter()
    for assignment in assignments:
        subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force",
                        f"--CourseDirectory.root={folder}"], cwd=folder, check=True, capture_output=True)
    return time.perf_counter() - started


def course_grade(folder: Path, jobs: int) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "course.cli", "--root", str(ROOT), "grade", "--class-dir",
                           str(folder), "--jobs", str(jobs), "--force"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"course grade failed:\n{proc.stdout}\n{proc.stderr}")
    return time.perf_counter() - started


def execute_alone(notebook: Path) -> float:
    nb = nbformat.read(str(notebook), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory(prefix="bench-alone-") as tmp:
        for item in notebook.parent.iterdir():
            if item.is_file() and item.suffix != ".ipynb":
                shutil.copy2(item, tmp)
        started = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": tmp}}).execute(stderr=subprocess.DEVNULL)   # its greeting
        return time.perf_counter() - started


def journal(folder: Path) -> dict[tuple[str, str], dict]:
    """What `course grade` noted about each submission it graded (its seconds among them)."""
    import json

    return {(m.stem, m.parent.name): json.loads(m.read_text()) for m in (folder / ".course-grade").glob("*/*.json")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-submissions", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="time both this many times, in turn; the median ratio")
    parser.add_argument("--per-notebook", action="store_true",
                        help="then time each notebook alone, graded and executed")
    parser.add_argument("--keep", type=Path, default=None, help="keep the two class folders here")
    args = parser.parse_args()
    course = Course(ROOT)
    assignments = course.assignments()
    tmp = Path(tempfile.mkdtemp(prefix="grade-benchmark-"))
    try:
        plain_dir, ours_dir = tmp / "plain", tmp / "ours"
        made = make_class(course, plain_dir, args.min_submissions)
        shutil.copytree(plain_dir, ours_dir)
        print(f"class: {len(made)} submissions of {len(assignments)} assignment(s): {', '.join(assignments)}")
        print(f"machine: {os.cpu_count()} CPU(s), load average before: {os.getloadavg()[0]:.1f} "
              "(other work on the machine slows the parallel run more than the serial one)")
        for folder in (plain_dir, ours_dir):
            register(course, folder, assignments)
        ceiling = parallel_ceiling(args.jobs)
        print(f"this machine's ceiling: {args.jobs} CPU-bound processes at once run {ceiling:.2f}x as fast "
              "as one after the other (median of 3)", flush=True)

        ratios = []
        for round_ in range(1, args.rounds + 1):
            t_plain = plain_nbgrader(plain_dir, assignments)
            t_ours = course_grade(ours_dir, args.jobs)
            busy = sum(entry["seconds"] for entry in journal(ours_dir).values())
            ratios.append(t_plain / t_ours)
            print(f"round {round_}: plain nbgrader autograde, serial {t_plain:6.1f} s ({t_plain / len(made):.1f} s a "
                  f"notebook) | course grade --jobs {args.jobs} (sandboxed, with feedback) {t_ours:5.1f} s "
                  f"({t_ours / len(made):.1f} s a notebook; its workers busy {busy / (args.jobs * t_ours):.0%}) | "
                  f"{t_plain / t_ours:.2f}x | load average {os.getloadavg()[0]:.1f}", flush=True)

        plain_scores = {a: cell_scores(f"sqlite:///{plain_dir / 'gradebook.db'}", a) for a in assignments}
        our_scores = {a: cell_scores(f"sqlite:///{ours_dir / 'gradebook.db'}", a) for a in assignments}
        differ = [(a, s, c, plain_scores[a][s].get(c), our_scores[a].get(s, {}).get(c))
                  for a in assignments for s in plain_scores[a] for c in plain_scores[a][s]
                  if plain_scores[a][s].get(c) != our_scores[a].get(s, {}).get(c)]
        cells_compared = sum(len(v) for a in assignments for v in plain_scores[a].values())
        print(f"grades: {'identical' if not differ else 'DIFFERENT'} ({cells_compared} graded cells of "
              f"{len(made)} submissions compared)")
        for d in differ:
            print("  differs:", d)
        print(f"speed ratio, plain / course grade --jobs {args.jobs}: {statistics.median(ratios):.2f}x"
              + (f" (median of {len(ratios)} rounds; lowest {min(ratios):.2f}x, highest {max(ratios):.2f}x)"
                 if len(ratios) > 1 else "")
              + f" (the machine's ceiling for {args.jobs} processes: {ceiling:.2f}x)", flush=True)
        if args.per_notebook:
            per_notebook(course, assignments, tmp / "single")
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")
        if args.keep:
            shutil.copytree(tmp, args.keep, dirs_exist_ok=True)
        return 0 if not differ else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def per_notebook(course: Course, assignments: list[str], single_dir: Path) -> None:
    # Per notebook, one at a time: the reference answers of each assignment executed alone,
    # then graded by `course grade --jobs 1` (its own time for that notebook, without the
    # few seconds the command needs to start).
    for assignment in assignments:
        source = cells.read(course.source_notebook(assignment))
        release = cells.read(course.release_notebook(assignment))
        submit(single_dir, assignment, "full", with_answers(release, reference_answers(source)))
    register(course, single_dir, assignments)
    course_grade(single_dir, 1)
    noted = journal(single_dir)
    print("\nper notebook, one at a time (s): executed alone | graded by course grade --jobs 1 "
          "(autograde + feedback) | overhead")
    for assignment in assignments:
        alone = execute_alone(single_dir / "autograded" / "full" / assignment / f"{assignment}.ipynb")
        entry = noted[("full", assignment)]
        total = entry["seconds"]
        print(f"  {assignment:22} {alone:6.1f} | {total:6.1f} ({entry['seconds_autograde']:.1f} + "
              f"{entry['seconds_feedback']:.1f}) | {total - alone:+6.1f} ({(total - alone) / alone:+.0%})",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
