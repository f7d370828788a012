"""course.grading.sandbox.limiter: what runs before the kernel in the sandbox, run here as the sandbox runs it
(`python -c TEXT SPEC PROGRAM ARGS...`), without bubblewrap and without a change of uid."""

import json
import subprocess
import sys
from pathlib import Path

import course.grading.sandbox.limiter as limiter

REPORT = """
import json, os, resource, sys
status = dict(line.split(':', 1) for line in open('/proc/self/status'))
print(json.dumps({'nofile': resource.getrlimit(resource.RLIMIT_NOFILE),
                  'fsize': resource.getrlimit(resource.RLIMIT_FSIZE),
                  'no_new_privs': status['NoNewPrivs'].strip(), 'argv': sys.argv[1:]}))
"""


def _limit(spec: dict, *program: str) -> subprocess.CompletedProcess:
    text = Path(limiter.__file__).read_text()
    return subprocess.run([sys.executable, "-c", text, json.dumps(spec), *program],
                          capture_output=True, text=True, timeout=60)


def test_limits_are_set_privileges_are_locked_and_the_program_takes_over():
    spec = {"rlimits": {"RLIMIT_NOFILE": 64, "RLIMIT_FSIZE": 1 << 20}}
    done = _limit(spec, sys.executable, "-c", REPORT, "an argument")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["nofile"] == [64, 64]
    assert seen["fsize"] == [1 << 20, 1 << 20]
    assert seen["no_new_privs"] == "1"
    assert seen["argv"] == ["an argument"]


def test_seeds_fill_their_targets_entry_by_entry_keeping_links(tmp_path):
    seed, target = tmp_path / "seed", tmp_path / "target"
    (seed / "data" / "deep").mkdir(parents=True)
    (seed / "data" / "deep" / "weights.txt").write_text("1 2 3")
    (seed / "notes.md").write_text("hello")
    (seed / "link").symlink_to("/etc/passwd")
    target.mkdir()
    (target / "already").write_text("kept")       # the target is a mount point: filled, never replaced
    done = _limit({"rlimits": {}, "seeds": [[str(seed), str(target)]]}, "/bin/true")
    assert done.returncode == 0, done.stderr
    assert (target / "data" / "deep" / "weights.txt").read_text() == "1 2 3"
    assert (target / "notes.md").read_text() == "hello"
    assert (target / "link").is_symlink() and str((target / "link").readlink()) == "/etc/passwd"
    assert (target / "already").read_text() == "kept"


def test_an_unknown_limit_stops_before_the_program_runs(tmp_path):
    marker = tmp_path / "ran"
    done = _limit({"rlimits": {"RLIMIT_NO_SUCH_THING": 1}}, "/usr/bin/touch", str(marker))
    assert done.returncode != 0 and "RLIMIT_NO_SUCH_THING" in done.stderr
    assert not marker.exists()
