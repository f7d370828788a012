"""Maintainer and TA tooling for the course: `course build`, `course check`, grading."""
