"""CI definitions: valid YAML, and the very commands the README gives."""

import re

import yaml
from grading_support import ROOT

README = (ROOT / "README.md").read_text()


def readme_quickstart() -> list[str]:
    block = re.search(r"## Quickstart\s+```bash\n(.*?)```", README, re.S).group(1)
    return [line.strip() for line in block.strip().splitlines()]


def workflow_commands(name: str) -> list[str]:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    return [step["run"].strip() for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]


def test_quickstart_is_two_commands_and_ci_runs_the_test_one():
    setup, test = readme_quickstart()
    assert setup == "./setup.sh"
    script = (ROOT / "setup.sh").read_text()
    assert "pip install -r requirements.txt" in script and "course.cli demo" in script
    ci_script = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci_script[-1] == test, "the last line of .ci/run must be the README's test command"
    assert "pip install --quiet -r requirements.txt" in "\n".join(ci_script)


def test_cpu_workflow_runs_the_ci_entry_point():
    assert ".ci/run" in workflow_commands("ci.yml")


def test_gpu_workflow_runs_the_readme_gpu_command():
    commands = workflow_commands("gpu.yml")
    assert "course gpu-check" in commands
    assert "course gpu-check" in README
