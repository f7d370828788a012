"""nbgrader's Execute step, run in a sandbox and hardened against bad submissions.

`GuardedExecute` replaces `Execute` in `Autograde.autograde_preprocessors` (see
`course.grading.worker`). For an honest notebook it gives the very outputs and scores that
nbgrader's own Execute gives; what it adds only matters when something goes wrong:

- the kernel starts in `course.grading.sandbox` (no network, no course files, limits);
- a time limit for the whole notebook on top of nbgrader's per-cell `Execute.timeout`:
  cells that would start after it are not run and get an error output instead;
- a kernel that dies (`os._exit`, a crash, a limit) or stops answering fails the cell
  that did it; a fresh kernel then silently re-runs the cells before it, so that later
  cells are graded as usual instead of failing for lack of state;
- more output than `output_per_cell` is dropped, with a note (tens of megabytes of
  printout would otherwise end up in the autograded notebook and the feedback);
- no test cell runs in the kernel: `course.grading.verdicts.judge` runs it in this process, against
  the notebook's names served by the kernel, and writes its verdict into the cell's
  outputs; nbgrader's SaveAutoGrades scores it from there as from any executed cell.

Every failure it adds is an ordinary error output on the cell, so nbgrader's own
SaveAutoGrades scores it zero, and its name (`ERROR_NAMES`) tells the report what happened.

Failures that are not the student's are no score at all: a kernel (or its sandbox) that
cannot start, and an instructor's locked cell that fails before any student cell ran (the
setup cell cannot import torch or helpers), raise `InfrastructureFailure`, which stops
the notebook; `course.grading.worker` then leaves the submission ungraded, to be tried again.
What happened beyond the cells (such a failure, processes still running when the kernel
ended) is written to `EVENTS_FILE` in the scratch folder, one JSON object a line.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from queue import Empty
from time import monotonic

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Dict, Integer, List, Unicode, default

from course.grading.contract import (
    EVENTS_FILE,
    JUDGE_FAILED,
    KERNEL_DIED,
    KERNEL_OUT_OF_MEMORY,
    KERNEL_START,
    LEFT_RUNNING,
    NOT_RUN,
    NOTE,
    NOTEBOOK_TIMEOUT,
    OUTPUT_DROPPED,
    OUTPUT_LOST,
    PROCESS_LIMIT_ERRORS,
    PROCESSES_STOPPED,
    SETUP_FAILED,
    InfrastructureFailure,
    answers_prefix,
    error_output,
)
from course.grading.judged_cells import QUIET_TIMEOUT, JudgedCells, byte_size
from course.grading.kernel.snippets import FREE_FAILED_FRAMES, REAP
from course.grading.output_form import mend
from course.grading.sandbox.host import oom_kills, release_folder
from course.grading.sandbox.kernel_manager import kernel_manager_for
from course.grading.sandbox.policy import Sandbox
from course.grading.sandbox.processes import kill_strays, stray_processes
from course.grading.kernel.loading import load_code
from course.grading.verdicts.zygote import JudgeFailed, judge_for, utf8_prefix
from course.notebook import cells


class GuardedExecute(JudgedCells, Execute):
    """nbgrader's Execute with a sandboxed kernel and the protections listed in the module docstring."""

    sandbox_json = Unicode("", help="course.grading.sandbox.Sandbox.to_json(); empty: nbgrader's own kernel").tag(config=True)
    scratch_dir = Unicode("", help="a folder for the kernel's home and sockets").tag(config=True)
    notebook_timeout = Integer(900, help="seconds for all cells of a notebook together").tag(config=True)
    output_per_cell = Integer(1 << 20, help="bytes of output kept per cell").tag(config=True)
    max_restarts = Integer(3, help="kernel restarts per notebook before the remaining cells are given up").tag(config=True)
    setup_cells = Dict(value_trait=List(Unicode()), help="for each notebook, the grade ids of its setup cells "
                       "(the locked cells before its first other code cell, in the source's order): a failure "
                       "there, with them run first and in that order, is the grader's").tag(config=True)

    @default("shutdown_kernel")
    def _end_at_once(self) -> str:
        # Nothing a kernel does after the last cell counts (a student's atexit hook least of
        # all), and a graceful end of a kernel that imported torch takes seconds in the sandbox.
        return "immediate"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # The answer socket's folder: the grader's alone (the kernel sees it read-only), at a short path of its
        # own whatever the scratch folder's length (a student id may be an e-mail address).
        self._answers = Path(tempfile.mkdtemp(prefix=answers_prefix(os.getpid())))
        os.chmod(self._answers, 0o755)
        self._sandbox = Sandbox.from_json(self.sandbox_json) if self.sandbox_json else Sandbox(bwrap=None)
        if self.sandbox_json:
            self.kernel_manager_class = kernel_manager_for(self._sandbox, Path(self.scratch_dir), self._answers)

    # -- the notebook ---------------------------------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = monotonic() + self.notebook_timeout
        self._ran: list[int] = []           # code cells executed so far, for a replay after a restart
        self._restarts = 0
        self._gave_up = ""                  # why no more cells run (no kernel)
        self._output_bytes: dict[int, int] = {}
        self._dropped: dict[int, int] = {}
        self._judge = None                  # this notebook's judge (course.grading.verdicts.zygote), from the first test cell
        self._judge_server = judge_for(self._sandbox)
        self._student_ran = False           # has any cell that is not the instructor's alone started?
        self._setup_left = list(self.setup_cells.get((resources or {}).get("unique_key", ""), []))
        self.timeout_func = self._cell_timeout
        try:
            self._judge_server.start()      # it imports torch while the kernel starts
        except JudgeFailed as error:
            raise self._infrastructure(JUDGE_FAILED, str(error)) from error
        try:
            return super().preprocess(nb, resources, km)
        finally:
            if self._judge is not None:
                self._judge.close()
            self._close_notes()
            shutil.rmtree(self._answers, ignore_errors=True)
            if self.scratch_dir:
                release_folder(Path(self.scratch_dir) / "run")

    def _record(self, event: dict) -> None:
        """Note `event` for course.grading.worker (see EVENTS_FILE)."""
        if self.scratch_dir:
            notebook = (getattr(self, "resources", None) or {}).get("unique_key", "")
            with open(Path(self.scratch_dir) / EVENTS_FILE, "a") as f:
                f.write(json.dumps({"notebook": notebook} | event) + "\n")

    def _infrastructure(self, kind: str, detail: str) -> InfrastructureFailure:
        self._record({"kind": kind, "detail": detail})
        return InfrastructureFailure(kind, detail)

    def _not_started(self, error: Exception) -> None:
        """A kernel did not start: the grader's failure (raised as such) while no student code has run;
        after that (a restart, see `_recover`) the notebook goes on without it, as for any lost kernel."""
        if not self._student_ran:
            raise self._infrastructure(KERNEL_START, f"{type(error).__name__}: {error}") from error

    def _is_next_setup_cell(self, cell) -> bool:
        """Is `cell` the next of the source's setup cells? Only they, first and in their order, run before
        student code: a student who moves a locked cell (a demo that calls their function) ahead of the
        setup, or reorders the setup cells, makes what fails there their own doing."""
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if self._setup_left and meta.get("locked") and meta.get("grade_id") == self._setup_left[0] \
                and not meta.get("grade") and not meta.get("solution"):
            self._setup_left.pop(0)
            return True
        return False

    async def async_start_new_kernel(self, **kwargs):
        try:
            await super().async_start_new_kernel(**kwargs)
        except Exception as error:
            self._not_started(error)
            raise

    # nbclient binds its synchronous wrappers to its own coroutine; rebind to this one.
    start_new_kernel = run_sync(async_start_new_kernel)

    async def _async_cleanup_kernel(self) -> None:
        km = self.km
        await super()._async_cleanup_kernel()
        left = getattr(km, "left_running", None)
        if left:
            self._record({"kind": LEFT_RUNNING, "count": left})

    _cleanup_kernel = run_sync(_async_cleanup_kernel)

    @property
    def cell_limit(self) -> int | None:
        """Seconds one cell may run: the TA's `--cell-timeout` (the sandbox's limits), else nbgrader's
        Execute.timeout. Read at every cell, not copied into `timeout` once: nbgrader applies its config to
        this preprocessor again after __init__, which put Execute.timeout back over the TA's limit."""
        return self._sandbox.limits.cell_timeout or self.timeout

    def _cell_timeout(self, cell) -> int:
        remaining = max(1, math.ceil(self._deadline - monotonic()))     # up to the deadline, not short of it
        return min(self.cell_limit, remaining) if self.cell_limit else remaining

    async def async_start_new_kernel_client(self):
        try:
            kc = await super().async_start_new_kernel_client()
        except Exception as error:
            self._not_started(error)
            raise
        loaded = await self._async_quiet(load_code(), timeout=120)
        if loaded is None or loaded.get("status") != "ok":
            await self._async_cleanup_kernel()
            error = RuntimeError("the new kernel stopped answering before any cell ran" if loaded is None else
                                 f"the answer server did not load in the new kernel: {loaded.get('ename')}: "
                                 f"{str(loaded.get('evalue'))[:200]}")
            self._not_started(error)
            raise error
        return kc

    # nbclient binds its synchronous wrappers to its own coroutine; rebind to this one.
    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return super().preprocess_cell(cell, resources, index)
        if self._gave_up or monotonic() >= self._deadline:
            reason = self._gave_up or f"the notebook ran past its {self.notebook_timeout} s limit before this cell"
            cell.outputs = [error_output(NOT_RUN if self._gave_up else NOTEBOOK_TIMEOUT, reason)]
            cell.execution_count = None
            return cell, self.resources
        if cells.is_test(cell):
            self._student_ran = True
            return self._test_outside(cell, index)
        grader_only = not self._student_ran and self._is_next_setup_cell(cell)
        self._student_ran = self._student_ran or not grader_only
        try:
            cell, _ = super().preprocess_cell(cell, resources, index)
        except DeadKernelError as error:
            if grader_only:
                raise self._infrastructure(SETUP_FAILED, f"cell {index + 1}: the kernel died") from error
            cell.outputs.append(self._died("the kernel died while running this cell (os._exit, a crash, or a "
                                           "resource limit)"))
            self._recover(index)
            return cell, self.resources
        except CellTimeoutError:    # nbclient's IOPub timeout: the reply came, the output never finished
            cell.outputs.append(error_output(OUTPUT_LOST, "the kernel answered but never finished sending "
                                                          "this cell's output"))
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if grader_only and errors:
            raise self._infrastructure(SETUP_FAILED, f"cell {index + 1}: {errors[0].get('ename')}: "
                                                     f"{str(errors[0].get('evalue'))[:200]}")
        if not errors:
            self._ran.append(index)     # only cells that completed are re-run after a restart
        self._note_dropped(cell, index)
        self._after_errors(cell, index, errors)
        if any(o.get("ename") in ("CellTimeoutError", OUTPUT_LOST) for o in cell.outputs if o.output_type == "error"):
            if not self._responsive():      # the interrupt did not stop it
                self._recover(index)
                return cell, self.resources
        return cell, self.resources

    def _after_errors(self, cell, index: int, errors) -> None:
        """Undo what a failed cell left behind that would break the cells after it (decided from the errors'
        type names and from measurements, never from their messages)."""
        if not errors:
            return
        names = {e.get("ename") for e in errors}
        launcher = getattr(getattr(self.km, "provisioner", None), "pid", None)
        left = len(stray_processes(launcher)) if launcher else 0
        if names & {*PROCESS_LIMIT_ERRORS, OUTPUT_LOST} or left >= self._sandbox.limits.processes // 2:
            # A fork bomb's children are copies of this kernel holding its sockets and the process
            # budget (lost output is their doing too; the failing call may as well have been a thread's
            # start): end them, the kernel carries on.
            stopped = kill_strays(launcher) if launcher else 0
            if stopped:
                self._record({"kind": PROCESSES_STOPPED, "cell": index + 1, "count": stopped})
                cell.outputs.append(NotebookNode(output_type="stream", name="stdout",
                                                 text=f"\n{NOTE}{stopped} processes this cell left "
                                                      "running were stopped]\n"))
            # The kernel must reap them (a zombie still counts against the process limit), and
            # may not have survived the process limit itself.
            if run_sync(self._async_quiet)(REAP) is None:
                cell.outputs.append(self._died("the kernel died after this cell hit the process limit"))
                self._recover(index)
        # IPython keeps the failed cell's finished frames (for %debug and its tracebacks), and so the memory it
        # grabbed: near the cap every later cell would fail. The kernel empties them (and, when it still holds
        # over half its limit, every finished frame).
        run_sync(self._async_quiet)(FREE_FAILED_FRAMES)

    def _responsive(self) -> bool:
        return run_sync(self._async_quiet)("pass") is not None

    async def _async_quiet(self, code: str, expressions: dict | None = None, silent: bool = True,
                           timeout: float = QUIET_TIMEOUT) -> dict | None:
        """Run `code` without history or recorded output; the reply's content, or None if none came."""
        if self.kc is None:
            return None
        msg_id = self.kc.execute(code, silent=silent, store_history=False, user_expressions=expressions or {},
                                 allow_stdin=False, stop_on_error=False)
        deadline = monotonic() + timeout
        while monotonic() < deadline:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=min(1.0, deadline - monotonic())))
            except Empty:
                if not await ensure_async(self.kc.is_alive()):
                    return None
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]
        return None

    # -- a dead or stuck kernel --------------------------------------------------------------------

    def _died(self, detail: str) -> NotebookNode:
        """The error a cell gets when the kernel died under it: out of memory when the kernel's memory group
        counted a kill (all its processes together over the limit), else `detail`."""
        if oom_kills(getattr(self.km, "control_groups", [])):
            return error_output(KERNEL_OUT_OF_MEMORY, "the kernel's processes together went over its memory "
                                                      "limit and the kernel was killed")
        return error_output(KERNEL_DIED, detail)

    def _recover(self, index: int) -> None:
        """A fresh kernel that has silently re-run the cells before `index` (not `index` itself)."""
        self._restarts += 1
        if self._restarts > self.max_restarts:
            self._gave_up = f"the kernel was lost {self.max_restarts} times; the rest of the notebook was not run"
            return
        try:
            run_sync(self._async_restart)()
        except Exception as error:  # noqa: BLE001 - whatever stops a restart, the notebook is still graded
            self._gave_up = f"the kernel could not be restarted ({type(error).__name__}: {error})"
            return
        for earlier in self._ran:
            if earlier == index or monotonic() >= self._deadline:
                continue
            reply = run_sync(self._async_quiet)(self.nb.cells[earlier].source,
                                                timeout=self._cell_timeout(self.nb.cells[earlier]))
            if reply is None:
                self._gave_up = "the kernel was lost again while re-running the cells before the one that killed it"
                return

    async def _async_restart(self) -> None:
        launcher = getattr(getattr(self.km, "provisioner", None), "pid", None)
        if launcher:
            kill_strays(launcher)
        await self._async_cleanup_kernel()
        self.km = self.create_kernel_manager()
        await self.async_start_new_kernel()
        await self.async_start_new_kernel_client()

    # -- output limit --------------------------------------------------------------------------------

    def process_message(self, msg, cell, cell_index):
        # In nbformat's form before nbclient reads it (it copies execution_count onto the cell before any output is
        # made), or nbgrader refuses the notebook when it writes it.
        mend(msg["msg_type"], msg["content"])
        return super().process_message(msg, cell, cell_index)

    def output(self, outs, msg, display_id, cell_index):
        msg_type = msg["msg_type"]
        if msg_type in ("stream", "display_data", "execute_result", "update_display_data"):
            content = msg["content"]
            size = byte_size(content.get("text", "")) + len(json.dumps(content.get("data", {})))     # ASCII-escaped
            used = self._output_bytes.get(cell_index, 0)
            room = self.output_per_cell - used
            if size > room:
                if msg_type == "stream" and room > 0:
                    # Keep the start of the stream: a warning or error at its top still counts.
                    content["text"] = utf8_prefix(content["text"], room)
                    self._output_bytes[cell_index] = self.output_per_cell
                    self._dropped[cell_index] = self._dropped.get(cell_index, 0) + size - room
                    return super().output(outs, msg, display_id, cell_index)
                self._dropped[cell_index] = self._dropped.get(cell_index, 0) + size
                return None
            self._output_bytes[cell_index] = used + size
        return super().output(outs, msg, display_id, cell_index)

    def _note_dropped(self, cell, index: int) -> None:
        dropped = self._dropped.get(index)
        if dropped:
            self._record({"kind": OUTPUT_DROPPED, "cell": index + 1, "bytes": dropped})
            cell.outputs.append(NotebookNode(
                output_type="stream", name="stdout",
                text=f"\n{NOTE}{dropped} more bytes of output were dropped: "
                     f"each cell keeps at most {self.output_per_cell} bytes]\n"))
