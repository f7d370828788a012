"""Checks of the checkout as a whole rather than of one module: the package's shape (test_house), lint, CI and
setup.sh, every notebook's test cells, and the tests' own record of plain nbgrader's grades (tests/plain_record.py)."""
