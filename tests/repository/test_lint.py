"""Ruff over the course's Python (the package, helpers, the tests, the benchmark), with the rules pyproject.toml
sets ([tool.ruff]): part of the README's test command, and of the fast tier."""

import subprocess
import sys

from grading_support import ROOT

LINTED = ("course", "helpers", "tests", "benchmarks")


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_ruff_finds_nothing():
    result = ruff(*LINTED)
    assert "No module named ruff" not in result.stderr, "ruff is missing: pip install -r requirements.txt"
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_with_these_rules_finds_a_real_mistake():
    mistakes = f"import os\n\n\ndef f(items=[]):\n    return undefined_name + '{'x' * 120}'\n"
    found = ruff("--output-format", "concise", "--stdin-filename", "tests/test_probe.py", "-", stdin=mistakes).stdout
    for rule in ("F401", "F821", "B006", "E501"):
        assert rule in found, (rule, found)
