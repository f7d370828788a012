"""`course gpu-check`: verify the reference notebooks on a CUDA GPU and measure what the course teaches.

On a machine without CUDA it says so, runs nothing and leaves docs/gpu-report.md as it is:
a report must only ever hold figures that were measured.
"""

import datetime
import subprocess
import sys
import time
from pathlib import Path

from course.checkout import Course

REPORT = Path("docs") / "gpu-report.md"


def gpu_identity() -> dict:
    import torch

    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        driver = "unknown (nvidia-smi not available)"
    return {"gpu": props.name, "memory_gib": props.total_memory / 2**30, "gpu_count": torch.cuda.device_count(),
            "driver": driver, "torch": torch.__version__, "cuda": torch.version.cuda}


# Two readings of each reference notebook: whether every cell runs on the GPU (nbval's lax mode fails a cell only
# when it raises), and how many cells print other than the CPU run recorded in the notebook (devices, timings and
# figures do, by design: a count to read beside the logs, not a failure).
MODES = (("runs", "--nbval-lax"), ("outputs", "--nbval"))


def nbval_on_gpu(course: Course, say, logs: Path | None = None) -> list[dict]:
    """pytest in each of MODES on each reference notebook, with the GPU visible: pass/fail, failed cells, run time."""
    results = []
    for assignment in course.assignments():
        notebook = course.reference_notebook(assignment)
        row = {"notebook": assignment}
        for mode, flag in MODES:
            say(f"nbval on CUDA ({mode}): {notebook.relative_to(course.root)} ...", flush=True)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "pytest", str(notebook), "-p", "no:xdist", "-p",
                                   "no:cacheprovider", "-o", "addopts=", flag, "-q", "-rf"],
                                  cwd=course.root, capture_output=True, text=True)
            lines = proc.stdout.strip().splitlines()
            row[mode] = {"passed": proc.returncode == 0, "summary": (lines or [""])[-1],
                         "failed": [line.removeprefix("FAILED ").split(" - ")[0].split("::")[-1]
                                    for line in lines if line.startswith("FAILED ")],
                         "seconds": time.perf_counter() - start}
            if logs is not None:
                logs.mkdir(parents=True, exist_ok=True)
                (logs / f"{assignment}-{mode}.log").write_text(proc.stdout + proc.stderr)
        results.append(row)
    return results


def memory_and_speed(steps: int = 20) -> list[dict]:
    """Notebook 03's model and batch: peak bytes and step time in float32, float16 and bfloat16 autocast."""
    import torch
    from torch import nn

    from helpers.memory import memory_demo_batch, memory_demo_model

    rows = []
    x, y = memory_demo_batch("cuda")
    loss_fn = nn.CrossEntropyLoss()
    for label, dtype in (("float32", None), ("float16 autocast", torch.float16), ("bfloat16 autocast", torch.bfloat16)):
        model = memory_demo_model().cuda()
        for _ in range(2):   # a first pass, then the measured one
            # The first pass of a mode also allocates what stays (cuBLAS's workspaces, made on a first matrix
            # product through the same allocator): measured is the second, like with like in every mode.
            model.zero_grad(set_to_none=True)
            loss = None
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()   # the peak of one forward and backward pass
            with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = loss_fn(model(x), y)
            loss.backward()
            peak = torch.cuda.max_memory_allocated()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
        autocast = torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None)

        def step():
            optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        for _ in range(3):  # warm-up: kernels chosen, caches filled
            step()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        rows.append({"mode": label, "peak_bytes": peak, "peak_above_start_bytes": peak - before,
                     "step_ms": 1000 * (time.perf_counter() - start) / steps})
        # freed before the next mode is measured: the loss too, whose graph (its AccumulateGrad nodes) holds the
        # model's parameters and their gradients alive after backward
        model = optimizer = loss = None
        torch.cuda.empty_cache()
    return rows


def nccl_all_reduce() -> dict | None:
    """Notebook 05's two-process DDP run with NCCL, where two GPUs exist."""
    import torch

    if torch.cuda.device_count() < 2:
        return None
    from helpers.ddp_demo import run_ddp_demo

    start = time.perf_counter()
    result = run_ddp_demo(world_size=2, backend="nccl")
    result["seconds"] = time.perf_counter() - start
    return result


def render_report(identity: dict, notebooks: list[dict], memory: list[dict], nccl: dict | None, when: str) -> str:
    lines = [
        "# GPU verification report",
        "",
        f"Produced by `course gpu-check` on {when}.",
        "",
        f"- GPU: {identity['gpu']} ({identity['memory_gib']:.1f} GiB), {identity['gpu_count']} device(s)",
        f"- driver {identity['driver']}; torch {identity['torch']}; CUDA {identity['cuda']}",
        "",
        "## Reference notebooks under nbval, GPU paths taken",
        "",
        "Every cell runs: nbval's lax mode (a cell fails only if it raises). Outputs as on the CPU: strict nbval against",
        "the outputs recorded on the CPU; devices, timings and figures differ by design, so this is a count to read.",
        "",
        "| notebook | every cell runs | outputs as on the CPU | run time |",
        "|---|---|---|---|",
    ]
    for r in notebooks:
        runs, outputs = r["runs"], r["outputs"]
        failed = f"; failed: {', '.join(runs['failed'])}" if runs["failed"] else ""
        lines.append(f"| {r['notebook']} | {'yes' if runs['passed'] else 'NO'} ({runs['summary']}{failed}) "
                     f"| {outputs['summary']} | {runs['seconds']:.1f} s |")
    fp32 = next(r for r in memory if r["mode"] == "float32")
    lines += ["", "## Notebook 03's model and batch: one forward and backward pass (the second of its mode)", "",
              "| mode | above what was allocated before | vs float32 | max_memory_allocated | step time |",
              "|---|---|---|---|---|"]
    for r in memory:
        ratio = r["peak_above_start_bytes"] / fp32["peak_above_start_bytes"]
        lines.append(f"| {r['mode']} | {r['peak_above_start_bytes'] / 2**20:.2f} MiB | {ratio:.2f} "
                     f"| {r['peak_bytes'] / 2**20:.2f} MiB | {r['step_ms']:.2f} ms |")
    lines += ["", "## Notebook 05: DDP with NCCL", ""]
    if nccl is None:
        lines.append("Not run: fewer than two GPUs on this machine (the notebook's gloo run on CPU covers the same code).")
    else:
        same = all(step["params_identical_across_ranks"] for rank in nccl["ranks"] for step in rank["steps"])
        lines.append(f"{nccl['world_size']} processes, backend {nccl['backend']}: every rank identical after every "
                     f"step: {same}; {nccl['seconds']:.1f} s.")
    return "\n".join(lines) + "\n"


def gpu_check(course: Course, say=print, logs: Path | None = None) -> int:
    """Measure on this machine's GPU and write REPORT; with `logs`, each nbval run's output is kept there too."""
    import torch

    if not torch.cuda.is_available():
        say("course gpu-check: no CUDA device on this machine; nothing was run or measured, "
            f"and {REPORT} is left unchanged.")
        return 0
    identity = gpu_identity()
    notebooks = nbval_on_gpu(course, say, logs)
    memory = memory_and_speed()
    nccl = nccl_all_reduce()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = course.root / REPORT
    report.parent.mkdir(exist_ok=True)
    report.write_text(render_report(identity, notebooks, memory, nccl, when))
    say(f"course gpu-check: wrote {REPORT}")
    return 0 if all(r["runs"]["passed"] for r in notebooks) else 1
