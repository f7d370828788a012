"""Grading a class: the TA's process (batch, pool, worker, commit), the judge that runs the tests
(verdicts/), the student's kernel (kernel/, sandbox/). See docs/ARCHITECTURE.md."""
