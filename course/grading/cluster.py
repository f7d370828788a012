"""Grading on a Dask distributed cluster: `Cluster`, a `contract.Executor` beside the local `pool.Pool`.

The TA's process sends each job to the cluster as plain data (`course.grading.bundle`: the submission, the
assignment's source folder, its definitions and nbgrader's configuration files, by value: no shared file system),
and a worker runs `grade_on_worker`: it unpacks the job into a folder of its own, grades it exactly as a local run
does (a single-process `pool.Pool` per worker thread: the same sandbox, judge, limits and hard limit), and sends
back the result and its autograded and feedback folders as data. The TA's process checks what came back (a
`GradeResult` of the job it sent, its folders a bundle) and alone commits it; anything else is refused and named.

Workers are plain `dask worker ADDRESS` processes on machines where the course is installed with its grading
extra; each grades as many submissions at once as it has threads. A worker whose sandbox cannot start is retired
from the cluster and named; its job goes to another. The scheduler places queued jobs on workers as they free up,
a worker that joins mid-run included, and runs again on another worker a job whose worker was lost.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

from course.grading.bundle import BundleError, pack, unpack
from course.grading.contract import FailureKind, GradeResult, GradingStopped, Job
from course.grading.inert import terminal
from course.grading.pool import STOP
from course.grading.sandbox.policy import MiB

JOB_LIMIT = 256 * MiB           # what one job's files may hold on their way to a worker
RESULT_LIMIT = 256 * MiB        # what one result's folders may hold on their way back
CONFIG_NAMES = ("nbgrader_config.py", "nbgrader_config.json")
SETTINGS = "pyproject.toml"
CONNECT_TIMEOUT = 30            # seconds to reach the scheduler
POLL = 0.25                     # seconds between looks at what finished
MAX_REFUSALS = 3                # a job refused by this many workers (no sandbox there) is not graded this run
NO_WORKERS = 120                # seconds with no worker in the cluster before the run stops


class Cluster:
    """The executor for `course grade --cluster ADDRESS` (or a scheduler file): jobs go to the cluster's
    workers. `workers` names the workers seen and `refused` those retired because their sandbox cannot start."""

    def __init__(self, address: str | None = None, scheduler_file: str | None = None, say=print,
                 timeout: float = CONNECT_TIMEOUT):
        from distributed import Client

        self.say = say
        where = address or scheduler_file
        try:
            self.client = (Client(address, timeout=timeout, set_as_default=False) if address else
                           Client(scheduler_file=scheduler_file, timeout=timeout, set_as_default=False))
        except OSError as error:
            raise GradingStopped(f"no Dask scheduler answered at {where}: {error}") from None
        self.where = where
        self.refused: dict[str, str] = {}

    def run(self, jobs: list[Job], hard_limit: float, on_start=None, on_result=None) -> None:
        """See `contract.Executor.run`. Jobs are queued on the scheduler a few more than the workers have threads
        (a class's files are never all in memory at once); the scheduler hands them to workers as their threads
        free up, a worker that joins included (on_start is called as a job is queued)."""
        pending, running = deque((job, True) for job in jobs), {}     # (job, announce it to on_start)
        refusals: dict[int, int] = {}
        idle_since = None

        def filed(job, result) -> bool:
            verdict = on_result(job, result) if on_result else None
            if verdict == STOP:
                pending.clear()
                for other in running:
                    other.cancel()
                return True
            if verdict:
                pending.append((job, True))
            return False

        while pending or running:
            while pending and len(running) < self._in_flight():
                job, announce = pending.popleft()
                if on_start and announce:
                    on_start(job)
                try:
                    running[self._submit(job, hard_limit)] = job
                except (BundleError, OSError, RecursionError) as error:     # this submission's files, not the run's
                    if filed(job, GradeResult.failed(job, FailureKind.GRADER_ERROR,
                                                     f"its files could not be sent to the cluster "
                                                     f"({type(error).__name__}: {str(error)[:200]})")):
                        return
            done = [future for future in running if future.done()]
            if not done:
                self._stop_if_scheduler_lost()
                idle_since = self._stop_if_no_workers(idle_since)
                time.sleep(POLL)
            for future in done:
                job = running.pop(future)
                result = self._result(future, job)
                if result is None:          # its worker refused it (no sandbox there): another one grades it
                    refusals[id(job)] = refusals.get(id(job), 0) + 1
                    if refusals[id(job)] <= MAX_REFUSALS:
                        pending.append((job, False))
                        continue
                    result = GradeResult.failed(job, FailureKind.WORKER_LOST,
                                                f"refused by {MAX_REFUSALS} cluster workers (no sandbox there)")
                if filed(job, result):
                    return

    def _in_flight(self) -> int:
        """How many jobs to keep queued: twice the cluster's threads, and a few more."""
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {}).values()
        return 2 * sum(w.get("nthreads", 1) for w in workers) + 4

    def _stop_if_no_workers(self, idle_since: float | None) -> float | None:
        """GradingStopped once the cluster has had no worker for NO_WORKERS seconds; when that began, or None."""
        if self.client.scheduler_info(n_workers=-1).get("workers"):
            return None
        now = time.monotonic()
        if idle_since is not None and now - idle_since > NO_WORKERS:
            raise GradingStopped(f"the cluster at {self.where} has had no worker for {NO_WORKERS} s: what finished "
                                 f"is recorded; start workers, and the next run grades what is left")
        return idle_since or now

    def sandbox(self, limits, allow_unsandboxed: bool):
        """The sandbox the workers are asked for, and why it may not be one: each worker makes its own with these
        limits (`grade_on_worker`), so the TA's machine needs no bubblewrap of its own."""
        from course.grading.sandbox.policy import Sandbox

        if allow_unsandboxed:
            return Sandbox(bwrap=None, limits=limits), ("--allow-unsandboxed: a cluster worker without bubblewrap "
                                                        "grades without a sandbox")
        return Sandbox(bwrap="bwrap", limits=limits), None     # isolated: a worker that cannot be refuses

    @property
    def notes(self) -> list[str]:
        """For the run's report: the workers that took no jobs, and why."""
        return [f"cluster worker {worker} took no jobs: no sandbox there ({why})" for worker, why in self.refused.items()]

    def _submit(self, job: Job, hard_limit: float):
        return self.client.submit(grade_on_worker, job_bundle(job), hard_limit, pure=False,
                                  key=f"course-grade-{job.assignment}-{os.urandom(8).hex()}")

    def _stop_if_scheduler_lost(self) -> None:
        if self.client.status != "running":     # "connecting": it lost the scheduler and is trying again
            raise GradingStopped(f"the cluster's scheduler at {self.where} was lost ({self.client.status}): what "
                                 f"finished is recorded; the next run grades what is left")

    def _result(self, future, job: Job) -> GradeResult | None:
        """The result `future` brought for `job`, checked; None when its worker refused the job."""
        worker = self._worker_of(future)
        if future.status == "cancelled":
            self._stop_if_scheduler_lost()
            return GradeResult.failed(job, FailureKind.WORKER_LOST, f"the cluster cancelled the job ({worker})")
        if future.status == "error":
            error = future.exception()
            lost = type(error).__name__ == "KilledWorker"
            return GradeResult.failed(job, FailureKind.WORKER_LOST if lost else FailureKind.GRADER_ERROR,
                                      f"on the cluster ({worker}): {type(error).__name__}: {str(error)[:300]}")
        try:
            sent = future.result()
        finally:
            future.release()
        if type(sent) is dict and set(sent) == {"refused", "worker"} and type(sent["refused"]) is str:
            # The worker names itself (where a result is held moves when a worker retires): a refusal is believed
            # from a worker already retired, or from the one holding it; one naming another is refused.
            named = str(sent["worker"])
            if named in self.refused:
                return None
            if named in worker.split(", "):
                self._retire(named, sent["refused"])
                return None
            return GradeResult.failed(job, FailureKind.BAD_RESULT, f"the cluster worker {worker} refused the job "
                                                                   f"in another worker's name: refused")
        try:
            return received(sent, job)
        except (BundleError, ValueError, TypeError, KeyError, OSError) as error:
            return GradeResult.failed(job, FailureKind.BAD_RESULT,
                                      f"the cluster worker {worker} sent back what is not this job's result "
                                      f"({type(error).__name__}: {str(error)[:200]}): refused")

    def _worker_of(self, future) -> str:
        try:
            held = self.client.who_has([future]).get(future.key) or ()
        except Exception:  # noqa: BLE001 - naming the worker is for the TA's reading only
            held = ()
        return ", ".join(held) or "a worker"

    def _retire(self, worker: str, why: str) -> None:
        """Take a worker whose sandbox cannot start out of the cluster, once, and name it."""
        if worker not in self.refused:
            self.refused[worker] = why
            self.say(terminal(f"cluster worker {worker} cannot grade (no sandbox there: {why}): retired from the "
                              f"cluster"))
            try:
                self.client.retire_workers(workers=[worker], close_workers=True)
            except Exception:  # noqa: BLE001 - it may be gone already
                pass
        if not self.client.scheduler_info().get("workers"):
            raise GradingStopped("no worker of the cluster can start a sandbox: " +
                                 "; ".join(f"{w}: {r}" for w, r in self.refused.items()))

    def close(self) -> None:
        self.client.close()

    def stop(self) -> None:
        """Interrupted: the cluster forgets this run's jobs (a worker's running kernel ends with its pool's job)."""
        self.client.close()


# -- what travels ----------------------------------------------------------------------------------------

def job_bundle(job: Job) -> dict:
    """`job` as plain data: its fields, and the files its paths name."""
    config = [{name: (Path(folder) / name).read_bytes() for name in CONFIG_NAMES if (Path(folder) / name).is_file()}
              for folder in job.config_dirs]
    return {"job": {"assignment": job.assignment, "student": job.student, "sandbox_json": job.sandbox_json,
                    "feedback": job.feedback},
            "submission": handed_in(job), "source": pack(job.source, JOB_LIMIT),
            "template_db": Path(job.template_db).read_bytes(), "config": config,
            # The checkout's settings beside its source/ (the release's placeholders are filled from them).
            "settings": (Path(job.source).parents[1] / SETTINGS).read_bytes()}


def handed_in(job: Job) -> dict:
    """What grading reads of a submission (`scratch.prepare`): its notebooks and timestamp, the regular files among
    them as bytes, and how many other entries its folder holds (counted there, never read): a class's other files
    never travel. BundleError past JOB_LIMIT; OSError or RecursionError for a folder that cannot be walked."""
    from course.grading.scratch import TIMESTAMP_BYTES, TIMESTAMP_FILE, handed_in_entries, notebook_names

    files, size = {}, 0
    for name in [f"{n}.ipynb" for n in notebook_names(job.template_db, job.assignment)] + [TIMESTAMP_FILE]:
        path = Path(job.submission) / name
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or (name == TIMESTAMP_FILE and info.st_size > TIMESTAMP_BYTES):
                continue                # left out there too: counted below
            size += info.st_size
            if size > JOB_LIMIT:
                raise BundleError(f"its notebooks hold more than {JOB_LIMIT >> 20} MiB")
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with open(fd, "rb") as f:
                files[name] = f.read(JOB_LIMIT + 1)
        except (FileNotFoundError, PermissionError):
            continue                    # missing or unreadable: as if not handed in, and counted if there
    return {"files": files, "others": max(0, handed_in_entries(Path(job.submission)) - len(files))}


def received(sent, job: Job) -> GradeResult:
    """The result a worker sent for `job`, its folders unpacked into the job's scratch folder here; ValueError
    (or BundleError) when it is not a result of this job."""
    if type(sent) is not dict or set(sent) != {"result", "autograded", "feedback"}:
        raise ValueError("not a result: a dict of result, autograded and feedback")
    result = GradeResult.from_json(sent["result"])
    if (result.assignment, result.student) != (job.assignment, job.student):
        raise ValueError(f"a result for another submission ({result.assignment!r:.60}, {result.student!r:.60})")
    if result.record is not None:
        from course.grading.gradebooks import check_result
        check_result(f"sqlite:///{job.template_db}", job.assignment, result.record)
    scratch = Path(job.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    folders = {}
    for name in ("autograded", "feedback"):
        if sent[name] is None:
            folders[name] = None
            continue
        (scratch / name).mkdir()
        unpack(sent[name], scratch / name, RESULT_LIMIT)
        folders[name] = str(scratch / name)
    if (result.autograded is None) != (folders["autograded"] is None):
        raise ValueError("its autograded folder and its result disagree")
    return replace(result, scratch=job.scratch, autograded=folders["autograded"], feedback=folders["feedback"])


# -- on a worker -------------------------------------------------------------------------------------------

_local = threading.local()          # each worker thread's own single-process pool
_sandboxes: dict = {}               # (limits, isolated) -> the Sandbox of this machine, or why there is none
_sandbox_lock = threading.Lock()


def grade_on_worker(sent: dict, hard_limit: float) -> dict:
    """Run on a cluster's worker: grade the job `sent` (`job_bundle`) as a local run does and send back the
    result and its folders (`received`), or {"refused": why, "worker": its address} when no sandbox can start
    here."""
    from course.grading.sandbox.policy import Sandbox, SandboxUnavailable

    given = Sandbox.from_json(sent["job"]["sandbox_json"])
    try:
        sandbox = _machine_sandbox(given)
    except SandboxUnavailable as error:
        from distributed import get_worker
        return {"refused": str(error), "worker": get_worker().address}
    root = Path(tempfile.mkdtemp(prefix="course-cluster-"))
    os.chmod(root, 0o755)       # the sandbox uid must reach its own folders below this one
    try:
        job = _job_here(sent, root, sandbox)
        result = _pool().grade(job, hard_limit)
        return {"result": result.to_json(),
                "autograded": pack(result.autograded, RESULT_LIMIT) if result.autograded else None,
                "feedback": pack(result.feedback, RESULT_LIMIT) if result.feedback else None}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _job_here(sent: dict, root: Path, sandbox) -> Job:
    source = root / "course" / "source" / sent["job"]["assignment"]     # a checkout's layout, as on the TA's side
    for folder in (root / "submission", source, root / "scratch"):
        folder.mkdir(parents=True)
    for name, content in sent["submission"]["files"].items():
        (root / "submission" / Path(name).name).write_bytes(content)
    left_out = root / "submission" / ".left-out"       # stand-ins, so that the worker counts what was left out
    for i in range(sent["submission"]["others"]):
        left_out.mkdir(exist_ok=True)
        (left_out / str(i)).touch()
    unpack(sent["source"], source, JOB_LIMIT)
    (root / "course" / SETTINGS).write_bytes(sent["settings"])
    (root / "template.db").write_bytes(sent["template_db"])
    config_dirs = []
    for i, files in enumerate(sent["config"]):
        folder = root / f"config{i}"
        folder.mkdir()
        for name, content in files.items():
            if name in CONFIG_NAMES:
                (folder / name).write_bytes(content)
        config_dirs.append(str(folder))
    given = sent["job"]
    return Job(assignment=given["assignment"], student=given["student"], submission=str(root / "submission"),
               source=str(source), template_db=str(root / "template.db"), config_dirs=tuple(config_dirs),
               scratch=str(root / "scratch"), sandbox_json=sandbox.to_json(), feedback=given["feedback"])


def _machine_sandbox(given):
    """This machine's sandbox with the run's limits (its own bubblewrap, Python and helpers paths), made once per
    process; SandboxUnavailable when there is none and the run did not allow grading without one."""
    from course.grading.sandbox.policy import SandboxUnavailable, make_sandbox

    key = (given.limits, given.isolated)
    with _sandbox_lock:
        if key not in _sandboxes:
            import course
            checkout = Path(course.__file__).resolve().parents[1]     # a checkout holds source/: never shown
            try:
                _sandboxes[key] = make_sandbox([checkout, Path(tempfile.gettempdir())], given.limits,
                                               allow_unsandboxed=not given.isolated)[0]
            except SandboxUnavailable as error:
                _sandboxes[key] = error
    made = _sandboxes[key]
    if isinstance(made, SandboxUnavailable):
        raise made
    return made


class _OnePool:
    """A worker thread's own `pool.Pool` of one process, kept for its next jobs."""

    def __init__(self):
        from course.grading.pool import Pool

        self.pool = Pool(1, _threads_per_kernel())

    def grade(self, job: Job, hard_limit: float) -> GradeResult:
        results = []
        self.pool.run([job], hard_limit, on_result=lambda _, result: results.append(result))
        return results[0]


def _pool() -> _OnePool:
    if getattr(_local, "pool", None) is None:
        _local.pool = _OnePool()
    return _local.pool


def _threads_per_kernel() -> int:
    """This machine's cores shared among the grading threads of every worker of the cluster on it (as it is at this
    worker's first job), as the local pool shares them among its processes: two workers of one thread each on a
    2-core machine give each kernel one core, not two each."""
    try:
        from distributed import get_client, get_worker

        me = get_worker()
        workers = get_client().scheduler_info(n_workers=-1)["workers"].values()
        here = sum(w.get("nthreads", 1) for w in workers if w.get("host") == me.ip) or me.state.nthreads
    except (ImportError, ValueError, AttributeError, KeyError, OSError):
        here = 1
    return max(1, (os.cpu_count() or 1) // max(1, here))


def wait_for_workers(cluster: Cluster, count: int, timeout: float) -> None:
    """Wait until the cluster has `count` workers (tests and the benchmark)."""
    deadline = time.monotonic() + timeout
    while len(cluster.client.scheduler_info().get("workers", {})) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {count} workers joined in {timeout:.0f} s")
        time.sleep(0.2)
