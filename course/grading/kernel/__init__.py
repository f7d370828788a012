"""What runs inside the student's kernel (sent as text: the kernel has no `course` package): the protocol,
the answer server and the snippets run between cells."""
