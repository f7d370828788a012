"""The class table, the problem lines and the progress of a run, on the TA's terminal and in the report.

Every text a submission wrote passes `inert.terminal` on its way here; what the lines say is worded by
`course.grading.diagnose`.
"""

from __future__ import annotations

import sys
import time

from course.grading.contract import GradeRun, Problem
from course.grading.inert import terminal

ID_WIDTH = 64      # characters of a student id in the table and the progress line (a folder name may have 255)


# -- presenting ----------------------------------------------------------------------------------

def table(rows: dict[str, dict[str, tuple[float, float] | None]], assignments: list[str],
          flagged: set[tuple[str, str]]) -> str:
    """The per-student table: score/max per assignment and the total; '!' marks a submission with problems."""
    short = [a.split("_")[0] if a[:2].isdigit() else a for a in assignments]
    header = ["student", *short, "total"]
    lines = []
    for student in sorted(rows):
        row, got, most = [terminal(student, ID_WIDTH)], 0.0, 0.0
        for a in assignments:
            value = rows[student].get(a)
            if value is None:
                row.append("-")
                continue
            score, max_score = value
            got, most = got + score, most + max_score
            row.append(f"{_num(score)}/{_num(max_score)}" + ("!" if (student, a) in flagged else ""))
        row.append(f"{_num(got)}/{_num(most)}")
        lines.append(row)
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, lines)])


def _num(x: float) -> str:
    return f"{x:g}"


def problem_lines(problems: dict[tuple[str, str], list[Problem]]) -> list[str]:
    """One line per problem, shown as written (`inert.terminal`): student, assignment, where, what."""
    out = []
    for (student, assignment), found in sorted(problems.items()):
        for problem in found:
            out.append(terminal(f"{student} / {assignment} / {problem.where}: {problem.what}"))
    return out


def present(run: GradeRun, sandbox) -> None:
    rows: dict[str, dict] = {}
    for (student, assignment), value in run.scores.items():
        rows.setdefault(student, {})[assignment] = value
    present = [a for a in run.assignments if any(a == b for _, b in run.scores)]
    run.table = table(rows, present, set(run.problems)) if rows else "(no submissions found)"
    lines = []
    if run.unsandboxed:
        lines.append(f"UNSANDBOXED: student code ran with the grader's rights (--allow-unsandboxed): {run.unsandboxed}")
    else:
        limits = sandbox.limits
        lines.append(f"sandbox: bubblewrap (no network, course files hidden), memory {limits.memory >> 20} MiB "
                     f"a process and {limits.total_memory() >> 20} MiB a kernel in all (where the machine has a "
                     f"memory cgroup), {limits.processes} processes, notebook limit {limits.notebook_timeout} s")
    lines += [terminal(note) for note in run.executor_notes]
    found = problem_lines(run.problems)
    lines.append(f"{len(run.graded)} graded, {len(run.skipped)} unchanged and skipped, "
                 + (f"{len(run.ungraded)} NOT GRADED, " if run.ungraded else "")
                 + f"{len(found)} problem(s) in {len(run.problems)} submission(s), {run.seconds:.1f} s")
    for (student, assignment), why in sorted(run.ungraded.items()):
        lines.append(terminal(f"{student} / {assignment} / grader: NOT GRADED, grade again (`course grade` grades "
                              f"it on its next run); not the student's doing: {why}"))
    lines += found
    run.report = "\n".join(lines)


class Progress:
    """A progress bar on a terminal, one line per finished submission otherwise."""

    def __init__(self, total: int, say):
        self.total, self.done, self.running, self.say = total, 0, 0, say
        self.tty = sys.stderr.isatty()
        self.started_at = time.perf_counter()

    def started(self, job) -> None:
        self.running += 1
        self._draw(f"{job.assignment}/{terminal(job.student, ID_WIDTH)} started")

    def retry(self, job, why: str) -> None:
        self.running -= 1
        self._draw(f"{job.assignment}/{terminal(job.student, ID_WIDTH)} failed ({terminal(why, 60)}), trying again",
                   final=not self.tty)

    def finished(self, job, graded: bool, problems: int = 0, seconds: float | None = None) -> None:
        self.running -= 1
        self.done += 1
        mark = "ok" if graded else "NOT GRADED"
        issues = f", {problems} problem(s)" if problems else ""
        took = f"{seconds:.1f} s" if seconds else "-"
        self._draw(f"{job.assignment}/{terminal(job.student, ID_WIDTH)} {mark} in {took}{issues}",
                   final=not self.tty)

    def _draw(self, what: str, final: bool = False) -> None:
        width = 24
        filled = width * self.done // max(1, self.total)
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.perf_counter() - self.started_at
        line = f"[{bar}] {self.done}/{self.total} graded, {self.running} running, {elapsed:.0f} s  {what}"
        if self.tty:
            print("\r" + line[:150].ljust(150), end="", file=sys.stderr, flush=True)
        elif final:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr, flush=True)
