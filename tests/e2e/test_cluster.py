"""`course grade --cluster`: the Dask executor (course/grading/cluster.py) and the bundles its jobs and results
travel as (course/grading/bundle.py).

The end-to-end tests start a real `dask scheduler` and real `dask worker` processes on 127.0.0.1 and grade kept
answers of one assignment on them; the grades must be plain nbgrader's, cell by cell (as local grading's are:
tests/e2e/test_verdicts.py), whatever happens to a worker on the way.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from grading_support import COURSE
from grading_support import grade as plain_nbgrader

from course.grading.batch import grade
from course.grading.bundle import BundleError, pack, unpack
from course.grading.cluster import Cluster, grade_on_worker, handed_in, job_bundle, received, wait_for_workers
from course.grading.contract import FailureKind, GradeOptions, GradeResult, GradingStopped, Job
from course.submissions import reference_answers, with_answers
from course.submissions.answers import lean
from course.grading.gradebooks import cell_scores, scores
from course.notebook import cells
from course.notebook.nbgrader_runs import submit

ASSIGNMENT = "04_serialization"
MiB = 1 << 20


# -- bundles ----------------------------------------------------------------------------------------------

def test_a_folder_travels_whole_names_links_and_all(tmp_path):
    src = tmp_path / "src"
    (src / "data" / "deep").mkdir(parents=True)
    (src / "notebook.ipynb").write_text("{}")
    (src / "data" / "deep" / "weights.pt").write_bytes(bytes(range(256)) * 10)
    os.mkdir(os.path.join(os.fsencode(src), b"caf\xe9"))        # a name that is not UTF-8 (a Windows zip)
    (src / "empty").mkdir()
    os.symlink("/etc/passwd", src / "planted")                  # travels as a link, never read
    os.mkfifo(src / "fifo")                                     # a special file does not travel
    bundle = pack(src, MiB)
    assert b"planted" in bundle["links"] and b"fifo" not in bundle["files"]
    dst = tmp_path / "dst"
    dst.mkdir()
    unpack(bundle, dst, MiB)
    assert (dst / "data" / "deep" / "weights.pt").read_bytes() == bytes(range(256)) * 10
    assert os.path.isdir(os.path.join(os.fsencode(dst), b"caf\xe9")) and (dst / "empty").is_dir()
    assert os.readlink(dst / "planted") == "/etc/passwd" and not (dst / "fifo").exists()


@pytest.mark.parametrize("bundle", [
    {"dirs": [], "files": {b"../outside": b"x"}, "links": {}},
    {"dirs": [], "files": {b"/etc/cron.d/x": b"x"}, "links": {}},
    {"dirs": [], "files": {b"a/./b": b"x"}, "links": {}},
    {"dirs": [], "files": {"text-name": b"x"}, "links": {}},
    {"dirs": [], "files": {b"a": "not bytes"}, "links": {}},
    {"dirs": [], "files": {}, "links": {b"up": b"/"}, "extra": 1},
    ["not", "a", "dict"],
], ids=["climbs", "absolute", "dot", "str-name", "str-content", "extra-key", "list"])
def test_what_is_not_a_bundle_is_refused(tmp_path, bundle):
    with pytest.raises(BundleError):
        unpack(bundle, tmp_path, MiB)
    assert not (tmp_path.parent / "outside").exists()


def test_no_folder_is_made_through_a_link_the_bundle_makes(tmp_path):
    """A link, then a link "under" it: refused before any folder is made where the first one points."""
    outside = tmp_path / "class"
    outside.mkdir()
    dst = tmp_path / "dst"
    dst.mkdir()
    bundle = {"dirs": [], "files": {}, "links": {b"up": os.fsencode(outside), b"up/submitted/mallory/x": b"y"}}
    with pytest.raises(BundleError):
        unpack(bundle, dst, MiB)
    assert list(outside.iterdir()) == []


def test_nothing_is_written_through_a_link_the_bundle_makes(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dst = tmp_path / "dst"
    dst.mkdir()
    # Links are made after every file, so a file "under" one cannot be written through it: refused instead.
    bundle = {"dirs": [], "files": {b"up/evil": b"x"}, "links": {b"up": os.fsencode(outside)}}
    with pytest.raises((BundleError, FileExistsError)):
        unpack(bundle, dst, MiB)
    assert not (outside / "evil").exists()


def test_a_bundle_over_its_limit_is_refused(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2048)
    with pytest.raises(BundleError):
        pack(tmp_path, 1024)
    with pytest.raises(BundleError):
        unpack({"dirs": [], "files": {b"big": b"x" * 2048}, "links": {}}, tmp_path / "..", 1024)


def test_only_what_grading_reads_of_a_submission_travels(tmp_path):
    """Its notebooks and timestamp; every other entry counted (as the worker's scratch.prepare counts it), never
    read: a 300 MiB sparse file or a link to a secret costs nothing and ends nothing."""
    job = _job(tmp_path)
    folder = tmp_path / "submitted"
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "nb.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text("2026-12-03 10:00:00 UTC")
    with open(folder / "big.bin", "wb") as f:
        f.truncate(300 * MiB)
    os.symlink("/etc/shadow", folder / "secret")
    (folder / "deep" / "er" / "notes.txt").write_text("x")
    sent = handed_in(replace(job, submission=str(folder)))
    assert sent == {"files": {"nb.ipynb": b"{}", "timestamp.txt": b"2026-12-03 10:00:00 UTC"}, "others": 3}


# -- what a worker sends back ----------------------------------------------------------------------------------

def _job(tmp_path, student="ada") -> Job:
    """A job whose assignment's definitions hold one notebook "nb": a test cell "t" of 2 points, an answer "a"."""
    template = tmp_path / "template.db"
    with Gradebook(f"sqlite:///{template}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook("nb", ASSIGNMENT)
        gb.add_grade_cell("t", "nb", ASSIGNMENT, max_score=2, cell_type="code")
        gb.add_solution_cell("a", "nb", ASSIGNMENT)
    return Job(assignment=ASSIGNMENT, student=student, submission="", source="", template_db=str(template),
               config_dirs=(), scratch=str(tmp_path / "scratch"), sandbox_json="{}")


def _record(score=2.0, cell="t", notebook="nb") -> dict:
    one = {"late_submission_penalty": None, "grades": {cell: [score, False]}, "comments": {"a": "fine"}}
    return {"timestamp": None, "notebooks": {notebook: one}}


def _sent(job: Job, student: str | None = None, record: dict | None = None) -> dict:
    result = GradeResult.scored(job, graded=True, record=record or _record(), autograded="/worker/scratch/autograded")
    data = result.to_json() | {"student": student or job.student}
    return {"result": data, "autograded": {"dirs": [], "files": {b"04.ipynb": b"{}"}, "links": {}},
            "feedback": None}


def test_a_workers_result_lands_in_the_jobs_scratch_folder(tmp_path):
    job = _job(tmp_path)
    result = received(_sent(job), job)
    assert result.scratch == job.scratch and result.autograded == str(tmp_path / "scratch" / "autograded")
    assert (tmp_path / "scratch" / "autograded" / "04.ipynb").read_bytes() == b"{}" and result.feedback is None


@pytest.mark.parametrize("change", ["another student", "garbage", "missing folder", "extra field", "points over",
                                    "negative points", "unknown cell", "unknown notebook", "points as text"])
def test_a_result_that_is_not_the_jobs_is_refused(tmp_path, change):
    job = _job(tmp_path)
    sent = _sent(job)
    records = {"points over": _record(1000.0), "negative points": _record(-1.0), "unknown cell": _record(cell="x"),
               "unknown notebook": _record(notebook="other"), "points as text": _record("2")}
    if change in records:
        sent = _sent(job, record=records[change])
    elif change == "another student":
        sent = _sent(job, student="grace")
    elif change == "garbage":
        sent = {"result": "<script>", "autograded": None, "feedback": None}
    elif change == "missing folder":
        sent["autograded"] = None
    else:
        sent["result"]["verdict"] = "full marks"
    with pytest.raises(ValueError):
        received(sent, job)


# -- a real cluster ------------------------------------------------------------------------------------------


class _Cluster:
    """A `dask scheduler` and named `dask worker` processes on 127.0.0.1, each in its own process group."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.file = str(folder / "scheduler.json")
        self.scheduler = self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", "0",
                                                   "--scheduler-file", self.file, "--no-dashboard"])
        deadline = time.monotonic() + 60
        while not Path(self.file).exists():
            assert time.monotonic() < deadline and self.scheduler.poll() is None, "the scheduler did not start"
            time.sleep(0.2)
        self.workers: dict[str, subprocess.Popen] = {}

    def _start(self, name: str, args: list[str], env: dict | None = None) -> subprocess.Popen:
        with open(self.folder / f"{name}.log", "wb") as log:    # the process keeps its own copy
            return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.folder, env=os.environ | (env or {}))

    def add_worker(self, name: str, env: dict | None = None) -> None:
        self.workers[name] = self._start(name, ["worker", "--scheduler-file", self.file, "--nthreads", "1",
                                                "--no-nanny", "--no-dashboard", "--name", name], env)

    def kill_scheduler(self) -> None:
        if self.scheduler.poll() is None:
            os.killpg(self.scheduler.pid, signal.SIGKILL)
            self.scheduler.wait(30)

    def kill(self, name: str) -> None:
        os.killpg(self.workers[name].pid, signal.SIGKILL)
        self.workers[name].wait(30)

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)


@contextmanager
def cluster(workers: int):
    folder = Path(tempfile.mkdtemp(prefix="course-cluster-test-"))
    running = _Cluster(folder)
    try:
        for i in range(workers):
            running.add_worker(f"w{i}")
        yield running
    finally:
        running.close()
        shutil.rmtree(folder, ignore_errors=True)


def _class(students: int) -> tuple[Path, object, list[str]]:
    """A class folder holding the first `students` submissions plain nbgrader graded (lean ones: only the
    nbgrader cells, several times faster to grade), and those students."""
    plain = plain_nbgrader(ASSIGNMENT)
    chosen = ["reference_lean", *sorted(set(plain.wrong_student.values()))][:students]
    class_dir = Path(tempfile.mkdtemp(prefix="cluster-class-"))
    for student in chosen:
        shutil.copytree(plain.autograded.parent / "submitted" / student, class_dir / "submitted" / student)
    return class_dir, plain, chosen


def _small_class(students=("reference", "untouched")) -> tuple[Path, list[str]]:
    """A class folder with submissions of the reference answers ("reference") and the untouched release."""
    class_dir = Path(tempfile.mkdtemp(prefix="cluster-class-"))
    release = lean(cells.read(COURSE.release_notebook(ASSIGNMENT)))     # only the nbgrader cells: faster
    answers = reference_answers(cells.read(COURSE.source_notebook(ASSIGNMENT)))
    for student in students:
        submit(class_dir, ASSIGNMENT, student, with_answers(release, answers) if student == "reference" else release)
    return class_dir, list(students)


def _full_and_zero(class_dir: Path) -> bool:
    """The reference answers scored full marks, the untouched release (where handed in) zero."""
    totals = scores(f"sqlite:///{class_dir / 'gradebook.db'}", [ASSIGNMENT])
    full, most = totals[("reference", ASSIGNMENT)]
    return full == most > 0 and totals.get(("untouched", ASSIGNMENT), (0, 0))[0] == 0


def _differences(class_dir: Path, plain, students: list[str]) -> list[str]:
    scores = cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", ASSIGNMENT)
    ours = {s: {key.split("/")[-1]: score for key, score in cells.items()} for s, cells in scores.items()}
    assert sorted(ours) == sorted(students), "every submission graded, once"
    return [f"{s} {cell}: plain nbgrader {score}, the cluster {ours[s].get(cell)}"
            for s in students for cell, (score, _) in plain.scores[s].items() if ours[s].get(cell) != score]


class _WatchedCluster(Cluster):
    """The executor, with a hook the test runs once, when the first job has started on a worker."""

    def __init__(self, *args, when_running=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.when_running, self.started_on = when_running, None

    def _submit(self, job, hard_limit):
        future = super()._submit(job, hard_limit)
        if self.when_running and self.started_on is None:
            deadline = time.monotonic() + 60
            while not any(self.client.processing().values()) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.started_on = next(w for w, keys in self.client.processing().items() if keys)
            self.when_running(self)
        return future


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.xdist_group(ASSIGNMENT)
def test_a_killed_worker_costs_no_grade_and_a_worker_that_joins_gets_work():
    """Two workers; as the first job runs, the worker running it is SIGKILLed and a third joins: every
    submission is graded once, with plain nbgrader's scores, and the newcomer graded some of them."""
    class_dir, plain, students = _class(4)
    with cluster(workers=2) as running:
        names = {}

        def kill_one_and_add_one(executor):
            info = executor.client.scheduler_info()["workers"]
            names.update({addr: w["name"] for addr, w in info.items()})
            running.kill(names[executor.started_on])
            running.add_worker("late")

        executor = None

        def make(processes, threads):
            nonlocal executor
            executor = _WatchedCluster(scheduler_file=running.file, when_running=kill_one_and_add_one)
            wait_for_workers(executor, 2, 120)
            return executor

        run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=2), say=lambda *a, **k: None,
                    executor=make)
        assert not run.ungraded, run.ungraded
        assert sorted(run.graded) == sorted((s, ASSIGNMENT) for s in students), "each graded exactly once"
        assert not _differences(class_dir, plain, students)
        looking = Cluster(scheduler_file=running.file)      # the run's own client closed with the run
        late = [addr for addr, w in looking.client.scheduler_info()["workers"].items() if w["name"] == "late"]
        assert late, "the worker that joined mid-run is in the cluster"
        done_by_late = looking.client.run(lambda dask_worker: dask_worker.state.executed_count, workers=late)
        assert sum(done_by_late.values()) >= 1, "the worker that joined mid-run graded a submission"
        looking.close()
    shutil.rmtree(class_dir, ignore_errors=True)


def _lying(sent, hard_limit):
    """A worker's answer for another student than the one sent."""
    job = Job(assignment=sent["job"]["assignment"], student="someone-else", submission="", source="",
              template_db="", config_dirs=(), scratch="/nowhere", sandbox_json="{}")
    return {"result": GradeResult.scored(job, graded=True, record={}).to_json(), "autograded": None,
            "feedback": None}


def _refusing_for_another(sent, hard_limit):
    """A worker's refusal in another worker's name (which would have that one retired)."""
    return {"refused": "no sandbox here", "worker": "tcp://127.0.0.1:9"}


class _LyingCluster(Cluster):
    liar = staticmethod(_lying)

    def _submit(self, job, hard_limit):
        return self.client.submit(self.liar, job_bundle(job), hard_limit, pure=False)


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.xdist_group(ASSIGNMENT)
@pytest.mark.parametrize("liar", [_lying, _refusing_for_another], ids=["another-student", "another-workers-name"])
def test_a_result_for_a_submission_the_worker_was_not_given_is_refused_and_the_worker_named(monkeypatch, liar):
    """Also: the TA's machine needs no bubblewrap of its own to grade on a cluster."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])     # the workers cannot import this test file
    class_dir, students = Path(tempfile.mkdtemp(prefix="cluster-class-")), ["untouched"]
    submit(class_dir, ASSIGNMENT, "untouched", cells.read(COURSE.release_notebook(ASSIGNMENT)))
    with cluster(workers=1) as running:
        monkeypatch.setenv("COURSE_BWRAP", "")      # here, not on the worker: as on a TA's laptop

        def make(processes, threads):
            executor = _LyingCluster(scheduler_file=running.file)
            executor.liar = liar
            wait_for_workers(executor, 1, 120)
            return executor

        try:
            run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=1), say=lambda *a, **k: None,
                        executor=make)
            why = run.ungraded[(students[0], ASSIGNMENT)]
        except GradingStopped as stopped:
            why = str(stopped)
    assert FailureKind.BAD_RESULT in why and "tcp://127.0.0.1:" in why and "refused" in why, why
    assert not cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", ASSIGNMENT), "nothing recorded"
    shutil.rmtree(class_dir, ignore_errors=True)


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.xdist_group(ASSIGNMENT)
def test_a_worker_without_a_sandbox_takes_no_jobs_and_is_named():
    """The only worker at the start cannot make a sandbox (no bubblewrap there): it refuses its job and is retired;
    a worker that can joins, and grades it; the report names the first."""
    class_dir, students = _small_class(["reference"])
    with cluster(workers=0) as running:
        running.add_worker("no-sandbox", env={"COURSE_BWRAP": ""})     # as if bubblewrap were not installed

        class JoinedOnRefusal(Cluster):
            def _retire(self, worker, why):
                if "able" not in running.workers:        # at the first refusal (both jobs went to the one worker)
                    running.add_worker("able")
                    wait_for_workers(self, 2, 120)
                super()._retire(worker, why)

        def make(processes, threads):
            executor = JoinedOnRefusal(scheduler_file=running.file, say=lambda *a, **k: None)
            wait_for_workers(executor, 1, 120)
            return executor

        run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=1), say=lambda *a, **k: None,
                    executor=make)
    assert not run.ungraded and sorted(run.graded) == sorted((s, ASSIGNMENT) for s in students)
    assert _full_and_zero(class_dir)
    assert len(run.executor_notes) == 1 and "took no jobs: no sandbox there (bubblewrap" in run.executor_notes[0]
    assert run.executor_notes[0] in run.report
    shutil.rmtree(class_dir, ignore_errors=True)


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.xdist_group(ASSIGNMENT)
def test_a_lost_scheduler_stops_the_run_and_the_next_run_grades_what_is_left():
    class_dir, students = _small_class()
    with cluster(workers=1) as running:
        class LosesItsScheduler(Cluster):
            def _result(self, future, job):
                result = super()._result(future, job)
                running.kill_scheduler()        # after the first result came back
                return result

        def make(processes, threads):
            executor = LosesItsScheduler(scheduler_file=running.file, timeout=5)
            wait_for_workers(executor, 1, 120)
            return executor

        with pytest.raises(GradingStopped, match="the cluster's scheduler at .* was lost"):
            grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=1), say=lambda *a, **k: None, executor=make)
    recorded = cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", ASSIGNMENT)
    assert len(recorded) == 1, "the first submission's grade stands"
    with cluster(workers=1) as running:
        def make_again(processes, threads):
            executor = Cluster(scheduler_file=running.file)
            wait_for_workers(executor, 1, 120)
            return executor

        run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=1), say=lambda *a, **k: None,
                    executor=make_again)
    assert len(run.skipped) == 1 and len(run.graded) == 1, "the next run grades only what was left"
    assert _full_and_zero(class_dir)
    shutil.rmtree(class_dir, ignore_errors=True)


def test_no_scheduler_stops_the_run_with_a_message_that_names_it():
    with pytest.raises(GradingStopped, match="no Dask scheduler answered at tcp://127.0.0.1:9"):
        Cluster(address="tcp://127.0.0.1:9", timeout=1)


def test_the_worker_side_names_the_task_it_runs():
    assert grade_on_worker.__module__ == "course.grading.cluster"    # importable on every worker, by name
