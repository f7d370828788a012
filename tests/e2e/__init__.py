"""End-to-end tests: a real `nbgrader autograde` or `course grade` of whole classes, notebooks run in kernels, browsers,
clusters, virtual environments (each marked e2e, browser, venv or slow: left out of the fast tier)."""
