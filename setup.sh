#!/usr/bin/env bash
# The README's first command: set up this machine for the course, then grade the demo class.
#   - bubblewrap, the sandbox `course grade` runs student kernels in, and Chromium, which the
#     test suite's browser tests drive: from apt on Debian or Ubuntu (with sudo when not root);
#   - the pinned Python packages and this course package with its grading and test extras
#     (requirements.txt), into the Python scripts/python names: the active virtual environment's,
#     else .venv here where python3 refuses pip installs (PEP 668, "externally-managed-environment",
#     as on Debian 12 and Ubuntu 24.04; made when missing); ./test.sh, the README's second command,
#     runs the tests with that same Python;
#   - `course demo` (arguments are passed on, e.g. ./setup.sh --jobs 4).
# Without apt (macOS), nothing is installed from the system; `course demo` then says why it
# cannot run student code here and what to do instead.
set -euo pipefail
cd "$(dirname "$0")"

if command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  needed=()
  command -v bwrap >/dev/null 2>&1 || needed+=(bubblewrap)
  # The database server the test suite's shared-gradebook tests start (a TA's own PostgreSQL is elsewhere).
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || needed+=(postgresql)
  python="$(scripts/python --which)"
  if [ "$python" = python3 ]; then
    python3 -m pip --version >/dev/null 2>&1 || needed+=(python3-pip)
  elif [ ! -x "$python" ]; then
    # Debian's and Ubuntu's python3 makes virtual environments only with python3-venv.
    python3 -c "import ensurepip" >/dev/null 2>&1 || needed+=(python3-venv)
  fi
  if [ "${#needed[@]}" -gt 0 ] || [ ! -x /usr/bin/chromium ]; then
    $SUDO apt-get update -qq
  fi
  if [ "${#needed[@]}" -gt 0 ]; then
    echo "setup: installing ${needed[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${needed[@]}" >/dev/null
  fi
  # Debian's chromium (Ubuntu ships it as a snap instead): without it the browser tests are skipped.
  if [ ! -x /usr/bin/chromium ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null \
      || echo "setup: no chromium package here: the test suite will skip its browser tests"
  fi
elif ! command -v bwrap >/dev/null 2>&1; then
  echo "setup: no apt-get here, and bubblewrap (Linux only) is not installed: course demo will say what to do"
fi

scripts/python --make -m pip install -r requirements.txt
scripts/python -m course.cli demo "$@"
