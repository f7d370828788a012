"""The judge's side: the process that runs the course's test code (zygote), a test cell's run (judge), and
the stand-ins through which a test uses the student's names (connection, remote, decode, sync, state, wire,
mirror)."""
