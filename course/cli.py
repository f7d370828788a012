"""The `course` command."""

import argparse
import sys
from pathlib import Path

from .paths import Course


def main(argv: list[str] | None = None) -> int:
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

    sub.add_parser("gpu-check", help="on a CUDA machine: nbval with GPU paths, memory and speed report "
                                     "(docs/gpu-report.md); without CUDA, says so and changes nothing")

    args = parser.parse_args(argv)
    course = Course.find(args.root)
    assignments = course.resolve(getattr(args, "assignments", None))

    if args.command == "gpu-check":
        from .gpu_check import gpu_check
        return gpu_check(course)
    if args.command == "build":
        from .build import build
        build(course, assignments)
        return 0
    if args.command == "check":
        from .check import check
        problems = check(course, assignments)
        for problem in problems:
            print(f"PROBLEM {problem}", file=sys.stderr)
        if problems:
            print(f"course check: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"course check: {len(assignments)} assignment(s) OK")
        return 0
    if args.command == "publish":
        from .publish import PublishRefused, publish
        try:
            files = publish(course, args.dir)
        except PublishRefused as refusal:
            print(f"course publish: {refusal}", file=sys.stderr)
            return 1
        print(f"course publish: wrote {len(files)} files to {args.dir}")
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
