"""nbgrader configuration for Section 10 (PyTorch).

`course build`, `course check`, `course grade`, the tests, and nbgrader's own commands and
formgrader run from the checkout (or from a class folder whose nbgrader_config.py loads this
one) all read this file, so that they grade under the same rules.
"""

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "pytorch-section10"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# Data files shipped with a notebook travel with it; caches and checkpoints do not.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.pt.tmp",
]

# What a student finds in place of each solution: what to do with it. The `raise` stays bare, so
# that an unwritten exercise is recognised by its error alone (NotImplementedError, no message).
c.ClearSolutions.code_stub = {
    "python": "# YOUR CODE HERE: replace this comment and the `raise` below with your code\nraise NotImplementedError()"}

# How notebooks run (timeouts, PyTorch warnings on stderr, output limits) is written once, in
# release/nbgrader_config.py, where a student's JupyterLab Validate finds it too.
from course.plugins.rules import configure, student_config  # noqa: E402

load_subconfig(str(student_config(__file__)))  # noqa: F821 (provided by traitlets)

# nbgrader generate_assignment fills the placeholders as `course build` does; generate_feedback
# hides hidden tests and holds back flagged notebooks as `course grade` does; formgrader's
# Autograde button refuses, pointing to `course grade` (see course/plugins/rules.py).
configure(c, __file__)
