"""`course grade --cluster` on a real Dask cluster on this machine: throughput with one and two workers.

    python benchmarks/cluster_benchmark.py [--min-submissions 12] [--out FILE.json]

Makes the same class as grade_benchmark.py (two or more submissions of every assignment: full, half, blank and
wrong answers), registers it (not timed), starts a `dask scheduler` on 127.0.0.1 and times, on fresh copies of the
class:

  1. `course grade` on the cluster with one worker (one thread), then with two (one thread each);
  2. `course grade --jobs 2` with the local pool, for comparison;

checks that the three gradebooks hold the same score in every graded cell, and measures the cluster's own cost per
submission by sending trivial tasks through the same scheduler. It prints (and writes to --out) the speed-up of two
workers over one, p50 and p95 seconds per submission, submissions per hour per core, and, from those measured
figures, the time a 1,200-student class (six notebooks each: 7,200) would take at 8, 32 and 128 workers; every
figure says whether it was measured or computed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grade_benchmark import make_class, register  # noqa: E402

from course.checkout import Course  # noqa: E402
from course.grading.batch import grade  # noqa: E402
from course.grading.cluster import Cluster, wait_for_workers  # noqa: E402
from course.grading.contract import GradeOptions  # noqa: E402
from course.grading.gradebooks import cell_scores  # noqa: E402

CLASS_SIZE = 1200 * 6       # a 1,200-student class hands in six notebooks each


def start(folder: Path, args: list[str], name: str) -> subprocess.Popen:
    with open(folder / f"{name}.log", "wb") as log:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=folder)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def on_cluster(course: Course, class_dir: Path, assignments: list[str], scheduler_file: str, workers: int):
    def make(processes, threads):
        executor = Cluster(scheduler_file=scheduler_file)
        wait_for_workers(executor, workers, 120)
        return executor

    return grade(course, class_dir, assignments, GradeOptions(jobs=workers), say=lambda *a, **k: None, executor=make)


def scheduling_cost(scheduler_file: str, tasks: int = 500) -> float:
    """Seconds the scheduler and a worker add per task, from `tasks` trivial ones sent one by one."""
    executor = Cluster(scheduler_file=scheduler_file)
    try:
        client = executor.client
        client.submit(abs, -1, pure=False).result()      # warm
        started = time.perf_counter()
        futures = [client.submit(abs, -i, pure=False) for i in range(tasks)]
        client.gather(futures)
        return (time.perf_counter() - started) / tasks
    finally:
        executor.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-submissions", type=int, default=12)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    course = Course.find(ROOT)
    assignments = course.assignments()
    work = Path(tempfile.mkdtemp(prefix="cluster-benchmark-"))
    base = work / "class"
    made = make_class(course, base, args.min_submissions)
    register(course, base, assignments)
    runs, procs = {}, []
    try:
        scheduler_file = str(work / "scheduler.json")
        procs.append(start(work, ["scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
                                  scheduler_file, "--no-dashboard"], "scheduler"))
        while not Path(scheduler_file).exists():
            time.sleep(0.2)
        for workers in (1, 2):      # fresh workers each time: a worker shares its machine's cores as it finds them
            started_workers = [start(work, ["worker", "--scheduler-file", scheduler_file, "--nthreads", "1",
                                            "--no-dashboard", "--name", f"w{workers}-{i}"], f"w{workers}-{i}")
                               for i in range(workers)]
            procs += started_workers
            folder = work / f"cluster{workers}"
            shutil.copytree(base, folder)
            started = time.perf_counter()
            run = on_cluster(course, folder, assignments, scheduler_file, workers)
            runs[f"cluster, {workers} worker(s)"] = (time.perf_counter() - started, run, folder)
            if workers == 1:
                for proc in started_workers:
                    stop(proc)
                time.sleep(2)
        cost = scheduling_cost(scheduler_file)
    finally:
        for proc in procs:
            stop(proc)
    folder = work / "local"
    shutil.copytree(base, folder)
    started = time.perf_counter()
    run = grade(course, folder, assignments, GradeOptions(jobs=2), say=lambda *a, **k: None)
    runs["local pool, --jobs 2"] = (time.perf_counter() - started, run, folder)

    scores = {name: {a: cell_scores(f"sqlite:///{f / 'gradebook.db'}", a) for a in assignments}
              for name, (_, _, f) in runs.items()}
    first = next(iter(scores.values()))
    identical = all(s == first for s in scores.values())
    one, two = runs["cluster, 1 worker(s)"][0], runs["cluster, 2 worker(s)"][0]
    per_job = list(runs["cluster, 2 worker(s)"][1].seconds_per_job.values())
    p50, p95 = statistics.median(per_job), percentile(per_job, 0.95)
    cores = len(os.sched_getaffinity(0))
    per_hour_per_core = len(made) / two * 3600 / cores
    result = {
        "machine": f"{platform.node()}: {cores} cores, Python {platform.python_version()}",
        "submissions": len(made),
        "measured": {name: round(seconds, 1) for name, (seconds, _, _) in runs.items()},
        "measured speed-up, 2 workers over 1": round(one / two, 2),
        "measured p50 / p95 seconds per submission (2 workers)": [round(p50, 1), round(p95, 1)],
        "measured scheduling cost per task (ms)": round(cost * 1000, 2),
        "measured submissions per hour per core (2 workers)": round(per_hour_per_core),
        "identical scores in every cell": identical,
        "computed: a 1,200-student class (7,200 notebooks), hours at N one-thread workers": {
            n: round(CLASS_SIZE * (p50 + cost) / n / 3600, 2) for n in (8, 32, 128)},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
