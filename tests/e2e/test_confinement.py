"""Issue 23: the grader confined. Hostile and odd-but-honest submissions graded for real with `course grade`.

- A link planted where a test writes or reads, a named pipe where a test loads a checkpoint, a disk
  filled through the kernel's one host folder, a huge answer: nothing outside the submission's sandbox
  changes (a canary file, the gradebook, a classmate's notebook), every output stays under its cap, the
  run ends in time, and honest submissions beside them keep full marks.
- A patched torch function in the kernel does not compute the test's own expected values.
- Honest work never loses to the grader's mechanics: a long e-mail student id, a non-ASCII one, a dataset
  whose items keep their autograd history (torch.cat and a DataLoader over them in the hidden tests).
- A kernel's hundred busy processes take no more than its share of the CPU from the kernel beside it.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest
from grading_support import COURSE

from course.grading.gradebooks import cell_scores
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.notebook.nbgrader_runs import submit
from course.grading.sandbox.policy import Limits
from course.grading.sandbox.host import control_groups, remove_groups
from course.submissions import reference_answers, with_answers

pytestmark = [pytest.mark.xdist_group("confinement"), pytest.mark.sandbox, pytest.mark.e2e]

CANARY_TEXT = "a file of the host that no submission may change\n"
LONG_ID = "a.very.long.student.name+section-7@university.example.edu"
UNICODE_ID = "étudiante-ñ-学生"


def _answers(assignment: str, **replaced: str):
    source = nbformat.read(str(COURSE.source_dir(assignment) / f"{assignment}.ipynb"), as_version=4)
    release = nbformat.read(str(COURSE.root / "release" / assignment / f"{assignment}.ipynb"), as_version=4)
    answers = reference_answers(source)
    for exercise, extra in replaced.items():
        answers[exercise] = answers[exercise] + "\n\n" + textwrap.dedent(extra)
    return with_answers(release, answers)


def _submissions(class_dir: Path) -> dict[tuple[str, str], object]:
    canary, gradebook = class_dir / "canary.txt", class_dir / "gradebook.db"
    classmate = class_dir / "submitted" / "honest-04" / "04_serialization" / "04_serialization.ipynb"
    return {
        ("honest-04", "04_serialization"): _answers("04_serialization"),
        (LONG_ID, "04_serialization"): _answers("04_serialization"),
        # The student's save_weights writes, then leaves links to the host's files where the test's file was
        # and next to it (names a test writes later), and tries the answer socket's folder.
        ("links-04", "04_serialization"): _answers("04_serialization", save_weights=f"""
            _save = save_weights
            def save_weights(model, path):
                import os, pathlib, glob
                _save(model, path)
                os.remove(path)
                os.symlink({str(canary)!r}, path)
                folder = pathlib.Path(path).parent
                for name, target in (("weights.pt", {str(gradebook)!r}), ("checkpoint.pt", {str(classmate)!r}),
                                     ("trap.pt", {str(canary)!r})):
                    try:
                        (folder / name).symlink_to(target)
                    except OSError:
                        pass
                for sock_dir in glob.glob("/tmp/course-answers-*"):
                    for name in ("s", "x"):
                        try:
                            (pathlib.Path(sock_dir) / name).unlink()
                        except OSError:
                            pass
            """),
        # A named pipe where the test will load the weights from (the first test's file only: the student's
        # own later calls would wait on it in the kernel until their cells' time ran out).
        ("fifo-04", "04_serialization"): _answers("04_serialization", save_weights="""
            _save = save_weights
            def save_weights(model, path):
                import os
                if str(path).endswith("bn.pt"):
                    os.mkfifo(path)
                else:
                    _save(model, path)
            """),
        # Fill the one host folder the kernel writes to (its socket folder) and report how much it took.
        ("disk-04", "04_serialization"): _answers("04_serialization", save_weights="""
            def _fill():
                import os
                from ipykernel import get_connection_file
                folder, written = os.path.dirname(get_connection_file()), 0
                try:
                    with open(os.path.join(folder, "filler"), "wb") as f:
                        for _ in range(64):
                            f.write(b"x" * (1 << 20))
                            f.flush()
                            written += 1 << 20
                except OSError:
                    pass
                print(f"FILLED {written} BYTES")
            _fill()
            """),
        ("honest-01", "01_tensors_devices"): _answers("01_tensors_devices"),
        (UNICODE_ID, "01_tensors_devices"): _answers("01_tensors_devices"),
        # Correct values whose x keeps an autograd history: torch.cat and a DataLoader over such items.
        ("graph-items-01", "01_tensors_devices"): _answers("01_tensors_devices", SineDataset="""
            _Plain = SineDataset
            class SineDataset(_Plain):
                def __getitem__(self, index):
                    x, y = super().__getitem__(index)
                    x = x.clone().requires_grad_(True)
                    return x * 1.0, y
            """),
        # y = x (wrong), and the kernel's torch.sin patched so that sin(x) = x there.
        ("patched-sin-01", "01_tensors_devices"): _answers("01_tensors_devices", SineDataset="""
            class SineDataset(Dataset):
                def __init__(self, n, noise=0.1, seed=0):
                    generator = torch.Generator().manual_seed(seed)
                    self.x = ((torch.rand(n, 1, generator=generator) * 2 - 1) * torch.pi).requires_grad_(True)
                    self.y = self.x.detach().clone()
                def __len__(self):
                    return len(self.x)
                def __getitem__(self, index):
                    return self.x[index] * 1.0, self.y[index]
            torch.sin = lambda t, *args, **kwargs: t.detach().clone()
            """),
        # Four million bytes of wide characters, in a cell and during a test: caps count bytes, not characters.
        ("emoji-01", "01_tensors_devices"): _answers("01_tensors_devices", broadcast_shape="""
            print("\\N{GRINNING FACE}" * 1_000_000)
            _first, _plain_shape = [True], broadcast_shape
            def broadcast_shape(shape_a, shape_b):
                if _first[0]:
                    _first[0] = False
                    print("\\N{GRINNING FACE}" * 1_000_000)
                return _plain_shape(shape_a, shape_b)
            """),
        # A 6 MB answer where a check prints what it got.
        ("huge-01", "01_tensors_devices"): _answers("01_tensors_devices", broadcast_shape="""
            def broadcast_shape(shape_a, shape_b):
                return "x" * 6_000_000
            """),
    }


@pytest.fixture(scope="module")
def graded():
    tmp = tempfile.TemporaryDirectory(prefix="confinement-")
    class_dir = Path(tmp.name)
    (class_dir / "canary.txt").write_text(CANARY_TEXT)
    for (student, assignment), notebook in _submissions(class_dir).items():
        submit(class_dir, assignment, student, notebook)
    lines = []
    grade(COURSE, class_dir, ["01_tensors_devices", "04_serialization"], GradeOptions(jobs=2, limits=Limits()),
          say=lambda *args, **kwargs: lines.append(" ".join(map(str, args))))
    yield class_dir, "\n".join(lines)
    tmp.cleanup()


def _scores(class_dir: Path, assignment: str) -> dict[str, dict[str, float]]:
    found = cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", assignment)
    return {student: {key.split("/")[-1]: score for key, score in cells.items()} for student, cells in found.items()}


def _cell(class_dir: Path, student: str, assignment: str, grade_id: str):
    path = class_dir / "autograded" / student / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    return next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def test_nothing_outside_the_sandbox_changes(graded):
    class_dir, _ = graded
    assert (class_dir / "canary.txt").read_text() == CANARY_TEXT
    assert not (class_dir / "canary.txt").is_symlink()
    scores = _scores(class_dir, "04_serialization")
    assert sum(scores["honest-04"].values()) == 14, scores["honest-04"]      # the classmate, and the gradebook
    nbformat.read(str(class_dir / "submitted" / "honest-04" / "04_serialization" / "04_serialization.ipynb"), 4)


def test_links_and_pipes_earn_nothing_and_hang_nothing(graded):
    """The judge sees a test's file only as the bytes of a regular file: a link or a pipe is no file to it (and
    it never waits on one); the student's links only break the student's own later tests."""
    class_dir, report = graded
    scores = _scores(class_dir, "04_serialization")
    for student in ("links-04", "fifo-04"):
        assert scores[student]["test_save_weights"] == 0, (student, scores[student])
    assert scores["fifo-04"]["test_load_weights"] == 2, scores["fifo-04"]    # the rest keeps its marks
    assert "fifo-04 / 04_serialization / 04_serialization.ipynb: cell" not in report.replace("self_check", ""), report


def test_the_kernels_host_folder_is_capped(graded):
    class_dir, _ = graded
    printed = "".join(o.get("text", "") for c in nbformat.read(str(
        class_dir / "autograded" / "disk-04" / "04_serialization" / "04_serialization.ipynb"), 4).cells
        if c.cell_type == "code" for o in c.get("outputs", []))
    written = int(printed.split("FILLED ")[1].split()[0])
    assert written <= 1 << 20, f"the kernel wrote {written} bytes into its socket folder on the host"
    assert sum(_scores(class_dir, "04_serialization")["disk-04"].values()) == 14


def test_a_huge_answer_is_cut_in_the_message(graded):
    class_dir, _ = graded
    cell = _cell(class_dir, "huge-01", "01_tensors_devices", "test_broadcast_shape")
    size = len(json.dumps(cell.outputs))
    assert size < 100_000, f"{size} bytes of output on one test cell"
    assert any(o.output_type == "error" for o in cell.outputs)


def test_a_patched_torch_in_the_kernel_does_not_compute_the_tests_values(graded):
    class_dir, _ = graded
    scores = _scores(class_dir, "01_tensors_devices")
    assert scores["patched-sin-01"]["test_SineDataset_items"] == 0, scores["patched-sin-01"]


def test_honest_work_never_loses_to_the_graders_mechanics(graded):
    class_dir, report = graded
    assert sum(_scores(class_dir, "04_serialization")[LONG_ID].values()) == 14
    for student in ("honest-01", UNICODE_ID, "graph-items-01"):
        assert sum(_scores(class_dir, "01_tensors_devices")[student].values()) == 14, (student, report)
    assert "NOT GRADED" not in report


def _control_groups() -> set[str]:
    groups = control_groups("probe", 1 << 30)
    found = {c for c in ("cpu", "memory") if any((g / f"{c}.max").exists() or (g / f"{c}.shares").exists()
                                                 or (g / f"{c}.limit_in_bytes").exists() for g in groups)}
    remove_groups(groups)
    return found


def _kernel(tmp_path, limits: Limits, cells: list[str]):
    """A NotebookClient for `cells` in a sandboxed kernel of worker 0 (its groups: client.km.control_groups)."""
    import nbformat.v4 as v4
    from nbclient import NotebookClient

    from course.grading.sandbox.kernel_manager import kernel_manager_for
    from course.grading.sandbox.policy import make_sandbox

    sandbox, _ = make_sandbox([COURSE.root], limits, allow_unsandboxed=False)
    nb = v4.new_notebook(cells=[v4.new_code_cell(c) for c in cells])
    manager = kernel_manager_for(sandbox.for_worker(0, 1), tmp_path / "kernel")
    (tmp_path / "notebook").mkdir()     # the notebook's folder, which the kernel's working folder copies
    return nb, NotebookClient(nb, kernel_name="python3", kernel_manager_class=manager, timeout=60,
                              resources={"metadata": {"path": str(tmp_path / "notebook")}})


@pytest.mark.skipif("cpu" not in _control_groups(), reason="no CPU control group can be made here (not root, or "
                                                           "no cgroup CPU controller): kernels share the worker's CPU")
def test_every_process_of_a_kernel_is_in_a_cpu_group_of_its_own(tmp_path):
    """The scheduler shares the CPU equally between groups: a kernel's many busy processes, each in a session
    (and a scheduler autogroup) of its own, still take only that kernel's share from the one beside it."""
    nb, client = _kernel(tmp_path, Limits(), [
        "import os, time\n"
        "for _ in range(3):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid(); time.sleep(30); os._exit(0)\n"
        "print('PIDS', os.getpid())", "import time; time.sleep(0.1)"])
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)
        launcher = client.km.provisioner.pid
        groups = client.km.control_groups
        assert groups and all(g.name == str(client.km.kernel_sandbox.uid) for g in groups)
        from course.grading.sandbox.processes import descendants
        below = set(descendants(launcher))
        for group in groups:
            members = set(map(int, (group / "cgroup.procs").read_text().split()))
            assert launcher in members and below and below <= members, (group, launcher, below, members)
    assert not any(g.exists() for g in groups), "the groups are removed with the kernel"


@pytest.mark.skipif("memory" not in _control_groups(), reason="no memory control group can be made here (not "
                                                              "root, or no cgroup memory controller)")
def test_a_kernels_processes_together_stay_under_its_memory(tmp_path):
    """RLIMIT_DATA holds one process: four children of 400 MiB each are within it, but not within the kernel's
    total (here 1 GiB + 4 x 16 MiB, the kernel's own torch included), which the memory group holds: the kernel
    loses children, not the host."""
    limits = Limits(memory=1 << 30, tmp_size=16 << 20)
    nb, client = _kernel(tmp_path, limits, [
        "import os, time\n"
        "children = []\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = bytearray(400 << 20)\n"
        "        for i in range(0, len(block), 4096):\n"
        "            block[i] = 1\n"
        "        time.sleep(3); os._exit(0)\n"
        "    children.append(pid)\n"
        "codes = [os.waitpid(pid, 0)[1] for pid in children]\n"
        "print('KILLED', sum(1 for c in codes if os.WIFSIGNALED(c)))"])
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)
        groups = client.km.control_groups
        memory = next(g for g in groups if (g / "memory.max").exists() or (g / "memory.limit_in_bytes").exists())
        peak = memory / "memory.max_usage_in_bytes"
        peak = int(peak.read_text()) if peak.exists() else int((memory / "memory.peak").read_text())
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "KILLED" in printed and int(printed.split("KILLED")[1].split()[0]) >= 1, printed
    assert peak <= limits.total_memory(), (peak, limits.total_memory())


def test_output_caps_count_bytes(graded):
    class_dir, _ = graded
    path = class_dir / "autograded" / "emoji-01" / "01_tensors_devices" / "01_tensors_devices.ipynb"
    for cell in nbformat.read(str(path), 4).cells:
        size = sum(len(o.get("text", "").encode()) for o in cell.get("outputs", []))
        assert size <= (1 << 20) + 1000, f"{size} bytes of output in one cell"
    assert path.stat().st_size < 4 << 20
