"""The course's own settings, from [tool.course] in pyproject.toml."""

import tomllib
from functools import cache
from pathlib import Path

PLACEHOLDERS = ("@@COURSE_REPOSITORY@@", "@@COURSE_BRANCH@@")


@cache
def settings(root: Path) -> dict:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["course"]


def fill_placeholders(text: str, root: Path) -> str:
    """`text` with the repository address and branch filled in (Colab badges, the Colab install)."""
    conf = settings(root)
    return text.replace("@@COURSE_REPOSITORY@@", conf["repository"]).replace("@@COURSE_BRANCH@@", conf["branch"])
