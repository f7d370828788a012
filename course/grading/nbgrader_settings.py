"""nbgrader's settings for a run: the folders its configuration files are read from, the configuration they
give (read once by the TA's process per run, and once per job by a worker), and copies of it pointed at one
course folder and gradebook."""

from __future__ import annotations

import copy
from pathlib import Path

from course.checkout import Course


def folders(course: Course, class_dir: Path) -> list[Path]:
    """Where nbgrader reads `nbgrader_config.py` / `.json`, lowest first: Jupyter's config path, then the class
    folder's own file, or the course's when the class folder has none."""
    from jupyter_core.paths import jupyter_config_path

    found = [Path(p) for p in reversed(jupyter_config_path())]
    found.append(class_dir if (class_dir / "nbgrader_config.py").is_file() else course.root)
    return found


def load(config_folders):
    """nbgrader's configuration as `nbgrader` itself would load it from these folders."""
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    config = Config()
    for folder in config_folders:
        for loader, ext in ((PyFileConfigLoader, ".py"), (JSONFileConfigLoader, ".json")):
            path = Path(folder) / f"nbgrader_config{ext}"
            if path.is_file():
                config.merge(loader(path.name, path=str(folder)).load_config())
    return config


def gradebook_url(class_dir: Path, db_url: str | None, config) -> str:
    """The gradebook a run records into: `db_url` (`--db`), else the configuration's CourseDirectory.db_url (a
    shared PostgreSQL gradebook, say), else the class folder's own SQLite file."""
    from course.notebook.classdir import ClassDir

    return db_url or config.CourseDirectory.get("db_url") or ClassDir(class_dir).db_url


def pointed_at(config, root: Path | str, db_url: str):
    """A copy of `config` whose course folder is `root` and gradebook `db_url` (the run's own stays as it was)."""
    pointed = copy.deepcopy(config)
    pointed.CourseDirectory.root = str(root)
    pointed.CourseDirectory.db_url = db_url
    return pointed
