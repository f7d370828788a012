"""nbgrader settings for running the course's notebooks: the student's and the grader's alike.

JupyterLab's Validate button reads this file when the server starts in release/, or through the
course's nbgrader_config.py (which loads it) when it starts beside release/. `course grade`,
`nbgrader autograde` and formgrader read it the same way, so a notebook that validates
is graded under the same timeouts and filters. Plain settings only: a student's machine has
nbgrader but not the course's grading code.
"""

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

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

# Validate has no IgnorePattern step (nbgrader's Validator.preprocessors is not configurable,
# and its Execute keeps the after-cell hook for itself): its kernel ignores warnings instead,
# so that the same warnings that cost no points under autograde fail no validation.
c.Validator.Execute.extra_arguments = [
    "--InteractiveShellApp.exec_lines=import warnings; warnings.filterwarnings('ignore', category=Warning)"]

# Students' printouts must not blow up the gradebook or the feedback HTML.
c.LimitOutput.max_lines = 500
c.LimitOutput.max_traceback = 100
