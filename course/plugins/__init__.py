"""The course's rules inside nbgrader's own commands and formgrader (named in nbgrader_config.py)."""
