"""Repository-wide pytest hooks."""

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups, and before -m deselects by marker
def pytest_collection_modifyitems(items):
    # nbval runs a notebook's cells in order in one kernel: all cells of a notebook must
    # stay on one xdist worker (pyproject's addopts use --dist loadgroup). A reference notebook
    # run in a kernel is an end-to-end test, and slow (tests/conftest.py says what the tiers are).
    for item in items:
        if item.nodeid.split("::")[0].endswith(".ipynb"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)
