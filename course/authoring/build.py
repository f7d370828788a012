"""`course build`: regenerate release/ and notebooks/ from source/."""

import shutil
import tempfile
import time
from pathlib import Path

from course.authoring.reference import build_reference
from course.authoring.selfcheck_data import data_path, visible_tests_json
from course.checkout import Course
from course.notebook.nbgrader_runs import generate_release, scratch_course


def build(course: Course, assignments: list[str], say=print) -> dict[str, float]:
    """Rebuild each assignment's release folder and reference notebook; returns run times in seconds."""
    timings = {}
    with tempfile.TemporaryDirectory(prefix="course-build-") as tmp:
        scratch = scratch_course(course, assignments, Path(tmp))
        for i, assignment in enumerate(assignments, 1):
            step = f"[{i}/{len(assignments)}] {assignment}"
            start = time.perf_counter()
            say(f"{step}: generating the student release with nbgrader ...", flush=True)
            generated = generate_release(scratch, assignment)
            target = course.release_dir(assignment)
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(generated, target)
            selfcheck = data_path(course, assignment)
            selfcheck.parent.mkdir(exist_ok=True)
            selfcheck.write_text(visible_tests_json(course.release_notebook(assignment)))
            say(f"{step}: executing the reference notebook on CPU ...", flush=True)
            timings[assignment] = build_reference(course, assignment)
            say(f"{step}: done in {time.perf_counter() - start:.1f} s "
                f"(notebook ran in {timings[assignment]:.1f} s)", flush=True)
    return timings
