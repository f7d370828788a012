#!/usr/bin/env bash
# The README's second command, and CI's (.ci/run): the whole test suite, with the Python setup.sh
# installed the course into (scripts/python). Arguments go to pytest, e.g. ./test.sh -m "not slow".
set -euo pipefail
cd "$(dirname "$0")"
exec scripts/python -m pytest "$@"
