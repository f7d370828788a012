"""course.grading.scratch: what of a submission reaches nbgrader. Unit tests; the end-to-end runs are in
tests/e2e/test_grade_names.py and tests/e2e/test_grade_mechanics.py."""

import pytest

from course.grading.scratch import _time_nbgrader_reads


@pytest.mark.parametrize("stamp,readable", [
    (b"2026-12-01 10:00:00.000000 UTC\n", True),        # what nbgrader's submit writes
    (b"2026-12-01 10:00:00+01:00", True),
    (b"", True),                                       # nbgrader warns and grades without a time
    (b"\x1b]0;PWNED\x07\x1b[2J 2020-13-45\n", False),  # held-out red team: nbgrader's own fail() is missing
    (b"2026-12-01 10:00:00 M\xfcnchen\n", False),      # not UTF-8: nbgrader reads it as text
    (b"tomorrow", False),
    (b"\x00", False),
])
def test_only_a_time_nbgrader_reads_is_kept(tmp_path, stamp, readable):
    path = tmp_path / "timestamp.txt"
    path.write_bytes(stamp)
    assert _time_nbgrader_reads(path) is readable
