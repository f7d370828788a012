"""sandbox.kernel_manager.CappedKernelClient: a kernel cannot make the TA's process read a huge message."""

import asyncio
import resource
import time

import pytest

from course.grading.sandbox.kernel_manager import MAX_KERNEL_MESSAGE, kernel_manager_for
from course.grading.sandbox.policy import Sandbox

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


async def _printed(kc, code: str, seconds: float = 15) -> int:
    """Characters of stream output the client received for `code`, until the kernel is idle (or time is up)."""
    msg_id, got, started = kc.execute(code), 0, time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            msg = await kc.get_iopub_msg(timeout=1)
        except Exception:  # noqa: BLE001 - queue.Empty: nothing yet
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            got += len(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return got


def test_a_message_over_the_cap_is_dropped_before_the_grader_reads_it(tmp_path):
    async def run():
        km = kernel_manager_for(Sandbox(bwrap=None), tmp_path / "scratch")()
        (tmp_path / "notebook").mkdir()
        await km.start_kernel(cwd=str(tmp_path / "notebook"))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            small = await _printed(kc, "print('x' * 1_000_000)")
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            huge = await _printed(kc, f"print('x' * {2 * MAX_KERNEL_MESSAGE})", seconds=10)
            grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before      # KiB
            return type(kc).__name__, small, huge, grew
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    client, small, huge, grew = asyncio.run(run())
    assert client == "CappedKernelClient"
    assert small == 1_000_001           # an ordinary message arrives whole
    assert huge == 0                    # the oversized one never reaches jupyter_client
    assert grew < MAX_KERNEL_MESSAGE // 1024, f"the grader grew by {grew} KiB"
