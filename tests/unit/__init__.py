"""Unit tests, beside what they test by name: unit/course/<package>/test_<module>.py tests course/<package>/<module>.py,
unit/helpers/test_<module>.py tests helpers/<module>.py (tests/repository/test_house.py keeps it so). The folders are
packages so that two test files may share a name (kernel/test_loading.py and helpers/test_loading.py) under pytest's
default import mode; `unit/` keeps `course` and `helpers` here from hiding the real packages."""
