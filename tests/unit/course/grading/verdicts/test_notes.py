"""course.grading.verdicts.notes: the one-way pipe out of the sandbox, written to here as the sandbox would."""

import os
import stat

import pytest

from course.grading.verdicts.notes import FIFO_NAME, LINE_BYTES, Listener, make_fifo, open_reader


@pytest.fixture
def pipe(tmp_path):
    path = make_fifo(tmp_path)
    listener = Listener(open_reader(path), str(path))
    writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    yield listener, writer
    os.close(writer)
    listener.close()


def test_the_fifo_is_made_write_only_for_others_and_replaces_a_planted_file(tmp_path):
    (tmp_path / FIFO_NAME).write_text("not a pipe")
    path = make_fifo(tmp_path)
    mode = path.lstat().st_mode
    assert path == tmp_path / FIFO_NAME and stat.S_ISFIFO(mode)
    assert stat.S_IMODE(mode) == 0o622
    assert make_fifo(tmp_path) == path and stat.S_ISFIFO(path.lstat().st_mode)     # made once, kept


def test_an_expected_token_is_heard_once_written(pipe):
    listener, writer = pipe
    listener.expect("tok-1")
    assert not listener.heard("tok-1")
    os.write(writer, b"tok-1\n")
    assert listener.heard("tok-1")


def test_tokens_not_expected_are_not_kept(pipe):
    listener, writer = pipe
    os.write(writer, b"early\n")        # written before anyone waited for it
    assert not listener.heard("early")
    listener.expect("early")
    assert not listener.heard("early")  # gone: it was read and dropped
    os.write(writer, b"other\n" * 1000)
    assert listener._heard == set()


def test_a_token_split_across_writes_is_one_line(pipe):
    listener, writer = pipe
    listener.expect("payload-ran")
    os.write(writer, b"payload-")
    assert not listener.heard("payload-ran")
    os.write(writer, b"ran\n")
    assert listener.heard("payload-ran")


def test_a_line_too_long_for_a_token_hides_no_token_at_its_end(pipe):
    listener, writer = pipe
    listener.expect("tok")
    os.write(writer, b"x" * (LINE_BYTES + 1))
    listener.heard("tok")               # the long start is read
    os.write(writer, b"tok\n")          # ... and then its end
    assert not listener.heard("tok")
    os.write(writer, b"tok\n")          # a line of its own
    assert listener.heard("tok")


def test_the_drain_thread_keeps_the_pipe_from_filling(pipe):
    listener, writer = pipe
    listener.expect("late")
    flood = b"z" * 1000 + b"\n"
    for _ in range(1000):               # a megabyte: far over a pipe's 64 KiB buffer
        while True:
            try:
                os.write(writer, flood)
                break
            except BlockingIOError:
                os.sched_yield()        # the judge's thread empties it
    os.write(writer, b"late\n")
    assert listener.heard("late")
