"""The `course` command."""

import argparse
import sys
from pathlib import Path

from course.checkout import Course
from course.notebook.classdir import ClassDir

# What `pip install .[grading]` adds (pyproject.toml): without them the package holds only what the
# notebooks import, and a command that needs one of them says what to install instead of a traceback.
GRADING_MODULES = frozenset({"nbgrader", "nbformat", "nbclient", "nbconvert", "jupyter_client", "jupyter_core",
                             "jupyter_server", "traitlets", "jinja2", "jsonschema", "alembic", "sqlalchemy",
                             "ipykernel"})
GRADING_INSTALL = ("pip install 'pytorch-course-section10[grading]' (in a checkout: pip install -e '.[grading]', "
                   "or ./setup.sh)")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in GRADING_MODULES:
            raise
        print(f"course: the grading tools are not installed here (no module {error.name}).\n"
              f"Install them with: {GRADING_INSTALL}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="course", description="Build, check and grade Section 10 (PyTorch).")
    parser.add_argument("--root", type=Path, default=None,
                        help="the course checkout (default: the one containing the current directory)")
    sub = parser.add_subparsers(dest="command", required=True)

    p_build = sub.add_parser("build", help="regenerate release/ and notebooks/ from source/")
    p_build.add_argument("assignments", nargs="*", help="default: all")

    p_check = sub.add_parser("check", help="fail when release/ or notebooks/ is stale or leaks source/")
    p_check.add_argument("assignments", nargs="*", help="default: all")

    p_publish = sub.add_parser("publish", help="write the student-facing tree to DIR, refusing any leak")
    p_publish.add_argument("dir", type=Path, help="a new or empty folder")

    p_grade = sub.add_parser("grade", help="autograde every submission in parallel, sandboxed, with a report",
                             description="Autograde submitted/<student>/<assignment>/ in the class folder with "
                                         "nbgrader, each student kernel in a sandbox; write autograded/, feedback/, "
                                         f"the gradebook, {ClassDir(Path()).grades_csv} and {ClassDir(Path()).report}.")
    p_grade.add_argument("assignments", nargs="*", help="default: every assignment in source/")
    _grading_options(p_grade)
    p_grade.add_argument("--class-dir", type=Path, default=None,
                         help="the nbgrader course folder holding submitted/ and gradebook.db (default: the checkout)")
    p_grade.add_argument("--force", action="store_true", help="regrade submissions already graded and unchanged")
    p_grade.add_argument("--no-feedback", action="store_true", help="do not write feedback HTML")
    p_grade.add_argument("--db", metavar="URL", default=None,
                         help="the gradebook, e.g. postgresql+psycopg://grader@db.example.edu/cs101 (a password from "
                              "PGPASSWORD or ~/.pgpass, never the command line); default: CourseDirectory.db_url "
                              "in nbgrader_config.py, else the class folder's gradebook.db")
    where = p_grade.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="ADDRESS", default=None,
                       help="grade on a Dask cluster: its scheduler's address, e.g. tcp://10.0.0.5:8786 (workers: "
                            "`dask worker ADDRESS` where the course is installed with its grading extra)")
    where.add_argument("--scheduler-file", metavar="FILE", default=None,
                       help="grade on the Dask cluster whose scheduler wrote FILE (`dask scheduler --scheduler-file`)")
    p_grade.add_argument("--roster", type=Path, default=None, metavar="CSV",
                         help="register students with their names first (the CSV `nbgrader db student import` "
                              "takes: id, first_name, last_name, email)")

    p_demo = sub.add_parser("demo", help="make a demo class (full, partial, blank and bad submissions) and grade it")
    p_demo.add_argument("--dir", type=Path, default=None, help="where to make it (default: build/demo in the checkout)")
    _grading_options(p_demo)

    p_report = sub.add_parser("report", help="write CLASS/report/index.html: scores, the hardest exercises and "
                                             "their failing messages, how well each test separates")
    p_report.add_argument("assignments", nargs="*", help="default: every assignment with graded submissions")
    p_report.add_argument("--class-dir", type=Path, default=None,
                          help="the graded class folder holding gradebook.db (default: the checkout)")

    p_compat = sub.add_parser("compat", help="grade and run the course on another torch, in a venv of its own",
                              description="Install TORCH_VERSION (PyPI's build) with the other pinned requirements "
                                          "and this checkout in build/compat/TORCH_VERSION/venv (reused when there), "
                                          "then autograde the reference (the whole reference notebook), untouched and "
                                          "wrong answers with it; exit non-zero on any failure.")
    p_compat.add_argument("torch_version", help="e.g. 2.15.0")
    p_compat.add_argument("assignments", nargs="*", help="default: all")
    p_compat.add_argument("--sample", type=int, default=None, metavar="N",
                          help="grade only the first N wrong answers of each exercise (default: all)")

    p_gpu = sub.add_parser("gpu-check", help="on a CUDA machine: nbval with GPU paths, memory and speed report "
                                             "(docs/gpu-report.md); without CUDA, says so and changes nothing")
    p_gpu.add_argument("--logs", type=Path, default=None, metavar="DIR", help="keep each nbval run's output in DIR")

    args = parser.parse_args(argv)
    course = Course.find(args.root)
    assignments = course.resolve(getattr(args, "assignments", None))

    if args.command in ("grade", "demo"):
        from course.grading.contract import GradingStopped
        from course.grading.sandbox.policy import SandboxUnavailable
        try:
            if args.command == "grade":
                return _grade(course, assignments, args)
            from course.tools.demo import demo
            return demo(course, args.dir or course.root / "build" / "demo", _grade_options(args))
        except SandboxUnavailable as error:
            print(f"course {args.command}: refusing to run student code without a sandbox: {error}\n"
                  "Install bubblewrap (apt-get install bubblewrap), or pass --allow-unsandboxed to accept "
                  "the risk; the report then says so.", file=sys.stderr)
            return 2
        except GradingStopped as error:
            from course.grading.inert import terminal
            print(f"course {args.command}: stopped: {terminal(error)}", file=sys.stderr)
            return 3

    if args.command == "report":
        from course.grading.class_report.html import write_report
        try:
            print(f"course report: {write_report((args.class_dir or course.root).resolve(), assignments)}")
        except FileNotFoundError as error:      # no gradebook: nothing graded there yet
            print(f"course report: {error}", file=sys.stderr)
            return 1
        return 0
    if args.command == "compat":
        from course.tools.compat import compat
        return compat(course, args.torch_version, assignments, args.sample)
    if args.command == "gpu-check":
        from course.tools.gpu_check import gpu_check
        return gpu_check(course, logs=args.logs)
    if args.command == "build":
        from course.authoring.build import build
        build(course, assignments)
        return 0
    if args.command == "check":
        from course.authoring.check import check
        problems = check(course, assignments)
        for problem in problems:
            print(f"PROBLEM {problem}", file=sys.stderr)
        if problems:
            print(f"course check: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"course check: {len(assignments)} assignment(s) OK")
        return 0
    if args.command == "publish":
        from course.authoring.publish import PublishRefused, publish
        try:
            files = publish(course, args.dir)
        except PublishRefused as refusal:
            print(f"course publish: {refusal}", file=sys.stderr)
            return 1
        print(f"course publish: wrote {len(files)} files to {args.dir}")
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


def _grading_options(p: argparse.ArgumentParser) -> None:
    from course.grading.pool import default_jobs
    from course.grading.sandbox.policy import Limits

    d = Limits()
    p.add_argument("--jobs", "-j", type=int, default=default_jobs(),
                   help="notebooks graded at once (default: the CPU count)")
    p.add_argument("--memory", type=_size, default=d.memory, help="memory per kernel process, e.g. 2G (default 2G)")
    p.add_argument("--processes", type=int, default=d.processes,
                   help=f"processes and threads per kernel (default {d.processes})")
    p.add_argument("--cell-timeout", type=int, default=None,
                   help="seconds per cell (default: Execute.timeout from nbgrader_config.py)")
    p.add_argument("--notebook-timeout", type=int, default=d.notebook_timeout,
                   help=f"seconds per notebook, all cells together (default {d.notebook_timeout})")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="grade even where no sandbox can be set up (student code then runs with your rights; "
                        "the report says so)")


def _size(text: str) -> int:
    """'2G', '512M', '2GiB' or a number of bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _grade_options(args):
    from course.grading.contract import GradeOptions
    from course.grading.sandbox.policy import Limits

    limits = Limits(memory=args.memory, processes=args.processes, cell_timeout=args.cell_timeout,
                    notebook_timeout=args.notebook_timeout)
    return GradeOptions(jobs=max(1, args.jobs), force=getattr(args, "force", False),
                        allow_unsandboxed=args.allow_unsandboxed, limits=limits,
                        feedback=not getattr(args, "no_feedback", False), db_url=getattr(args, "db", None))


def _grade(course: Course, assignments: list[str], args) -> int:
    from course.grading.batch import grade

    from course.grading import nbgrader_settings

    class_dir = (args.class_dir or course.root).resolve()
    options = _grade_options(args)
    db_url = nbgrader_settings.gradebook_url(class_dir, options.db_url,
                                             nbgrader_settings.load(nbgrader_settings.folders(course, class_dir)))
    if args.roster:
        from course.grading.gradebooks import import_roster
        import_roster(db_url, args.roster)
    executor = None
    if args.cluster or args.scheduler_file:
        from course.grading.cluster import Cluster

        def executor(processes, threads):
            return Cluster(address=args.cluster, scheduler_file=args.scheduler_file)
    run = grade(course, class_dir, assignments, options, executor=executor)
    print(run.table)
    print()
    print(run.report)
    folder = ClassDir(class_dir)
    from sqlalchemy.engine import make_url
    shown = folder.gradebook if run.db_url == folder.db_url else make_url(run.db_url).render_as_string(True)
    print(f"\ngradebook: {shown}   grades: {folder.grades_csv}   "
          f"report: {folder.report}   feedback: {folder.feedback()}/")
    from course.grading.class_report.html import write_after_grading
    page = write_after_grading(class_dir, course.assignments(), db_url=run.db_url)  # the whole class's
    if page:
        print(f"class report (open it in a browser): {page}")
    return 1 if run.ungraded else 0     # some submissions must be graded again


if __name__ == "__main__":
    sys.exit(main())
