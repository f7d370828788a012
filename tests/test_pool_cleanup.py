"""course.grading.pool: a worker killed at the hard limit leaves nothing behind (issue 23, second red team)."""

import os
import tempfile
from pathlib import Path

from course.grading.contract import answers_prefix
from course.grading.pool import clear_worker
from course.grading.sandbox.host import control_groups
from course.grading.sandbox.policy import UIDS_PER_PROCESS, uid_block

GONE_WORKER = 4_000_000     # a pid no process has here (pids stay below 2**22)


def test_a_killed_workers_answer_folders_and_control_groups_are_removed():
    folder = Path(tempfile.mkdtemp(prefix=answers_prefix(GONE_WORKER)))
    (folder / "s").write_text("")
    other = Path(tempfile.mkdtemp(prefix=answers_prefix(GONE_WORKER + 1)))    # another worker's: kept
    first = uid_block(GONE_WORKER)
    groups = control_groups(str(first + 3), 1 << 30) + control_groups(str(first + UIDS_PER_PROCESS - 1), 1 << 30)
    neighbour = control_groups(str(first + UIDS_PER_PROCESS), 1 << 30)        # the next block's: kept
    try:
        clear_worker(GONE_WORKER)
        assert not folder.exists() and other.exists()
        assert not any(g.exists() for g in groups)
        assert all(g.exists() for g in neighbour)
    finally:
        os.rmdir(other)
        for group in neighbour:
            group.rmdir()
