"""nbgrader configuration for Section 10 (PyTorch).

`course build`, `course check` and the tests read this same file, so that a TA's
`nbgrader autograde` and our checks grade under the same rules.
"""

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "pytorch-section10"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# Data files shipped with a notebook travel with it; caches and checkpoints do not.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.pt.tmp",
]

# Every cell of the course runs on a CPU in seconds; 60 s catches infinite loops
# without failing a slow laptop. (Execute.timeout, not ExecutePreprocessor.timeout:
# nbgrader's own preprocessor ignores the latter.)
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True

# nbgrader scores any stderr output in a test cell as a failure. PyTorch warnings
# (deprecations, "TypedStorage is deprecated", ...) go to stderr and must never cost
# a student points.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"[A-Za-z]*Warning"

# Students' printouts must not blow up the gradebook or the feedback HTML.
c.LimitOutput.max_lines = 500
c.LimitOutput.max_traceback = 100
