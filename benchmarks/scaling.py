"""Scaling study: ember's training step against PyTorch eager as batches grow and models deepen.

Workloads (float32, one training step each: zero_grad, forward, loss, backward, optimizer step):

- LeNet-5 (the model and step of benchmarks/lenet5.py: cross_entropy, SGD(lr=0.01,
  momentum=0.9)) on batches of 16, 64, 256 and 1024 1x28x28 images;
- an MLP of width 256 with 2, 8 and 32 ``Linear`` layers (256 -> 256 with ReLU between, the
  last 256 -> 10), cross_entropy, Adam(lr=1e-3), batch 64.

Each is run as ember eager, ember compiled (``ember.compile`` of the whole step) and PyTorch
eager, from the same weights and data: ember eager's losses and then the compiled step's are
checked against PyTorch's before anything is timed. Steps alternate between the three in one
process, best of several repeats (``_timing.best_of``).

Threads: each thread count (1 and 2) runs in a child process of this script, started with
``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` set
(NumPy's OpenBLAS and numba read them once, when they load) and pinned to that many cores
(``sched_setaffinity``, so ember's convolution copy threads get no extra core either);
``torch.set_num_threads`` is set to the same number.

Also measured, per workload and thread count (``_inside_ops`` says how): the Python share (the
fraction of a step's time outside the ops' array kernels) of each of the three, and the peak
memory of one step (ember: ``tracemalloc``; PyTorch: its profiler's allocation events).

Prints a table, writes the results as JSON and draws the step-time ratios and the Python shares
against batch size and depth as a PNG (defaults: benchmarks/results/scaling.json and
docs/images/scaling.png; ``--quick`` writes to a temporary folder instead, so a smoke run never
replaces the figures of a full run).

    python benchmarks/scaling.py [--quick] [--threads 1 2] [--repeats 5] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from _inside_ops import (  # noqa: E402
    ember_inside,
    python_share,
    torch_inside,
    torch_peak_bytes,
)
from _timing import best_of, check_losses, compile_and_check, steps_for, train_step  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENET_BATCHES = (16, 64, 256, 1024)
MLP_DEPTHS = (2, 8, 32)
MLP_WIDTH, MLP_BATCH, MLP_CLASSES = 256, 64, 10
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
SHARE_STEPS = 50  # at most, per instrumented run (the profiler's events take long to read)
CONTENDERS = ("ember eager", "ember compiled", "torch eager")
MIB = 1 / 2**20


def make_data(kind: str, size: int, seed: int = 0) -> tuple:
    """Images and labels of a LeNet batch of ``size``, or features and labels of an MLP batch."""
    rng = np.random.default_rng(seed)
    if kind == "lenet":
        return rng.standard_normal((size, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, size)
    x = rng.standard_normal((MLP_BATCH, MLP_WIDTH)).astype(np.float32)
    return x, rng.integers(0, MLP_CLASSES, MLP_BATCH)


def mlp(lib, depth: int):
    """``depth`` Linear layers of width 256 with ReLU between them, then 10 classes."""
    nn = lib.nn
    layers = []
    for _ in range(depth - 1):
        layers += [nn.Linear(MLP_WIDTH, MLP_WIDTH), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(MLP_WIDTH, MLP_CLASSES))


def build(kind: str, size: int, lib, data, state=None):
    """``(model, step)`` of a workload for ``lib`` (ember or torch), loading ``state`` if given."""
    if kind == "lenet":
        from lenet5 import build as build_lenet

        model, step, _ = build_lenet(lib, data, state)
        return model, step
    model = mlp(lib, size)
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = lib.from_numpy(data[0].copy()), lib.from_numpy(data[1].copy())
    return model, train_step(opt, lib.nn.functional.cross_entropy, model, x, y)


def measure(kind: str, size: int, repeats: int, seconds: float) -> dict:
    """Step times, Python shares and peak memory of one workload at this process's threads."""
    import torch
    from compiled_lenet5 import peak_bytes

    import ember
    from ember.static import passes

    data = make_data(kind, size)
    torch.manual_seed(0)
    tmodel, tstep = build(kind, size, torch, data)
    state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    _, estep = build(kind, size, ember, data, state)
    check_losses(estep, tstep)
    _, raw = build(kind, size, ember, data, state)
    cstep, t_compile, _ = compile_and_check(ember, raw, build(kind, size, torch, data, state)[1])
    runs = dict(zip(CONTENDERS, (estep, cstep, tstep)))
    steps = steps_for(runs, seconds)
    best = best_of(runs, repeats, steps)

    def compiled():
        step = ember.compile(build(kind, size, ember, data, state)[1])
        step()
        passes.wait_for_kernels()
        return step

    share_repeats, share_steps = max(1, repeats // 2), min(steps, SHARE_STEPS)
    inside = {
        "ember eager": ember_inside(
            lambda: build(kind, size, ember, data, state)[1], share_repeats, share_steps
        ),
        "ember compiled": ember_inside(compiled, share_repeats, share_steps),
        "torch eager": torch_inside(tstep, share_repeats, share_steps),
    }
    peak = {
        "ember eager": peak_bytes(estep),
        "ember compiled": peak_bytes(cstep),
        "torch eager": torch_peak_bytes(tstep),
    }
    return {
        "workload": kind,
        "size": size,
        "steps": steps,
        "compile_s": t_compile,
        "step_s": best,
        "python_share": {k: python_share(*inside[k]) for k in CONTENDERS},
        "inside_s": {k: inside[k][0] for k in CONTENDERS},
        "peak_bytes": peak,
    }


def workloads(quick: bool) -> list:
    """``[(kind, size)]``: the LeNet batches, then the MLP depths (the two smallest of each
    with ``quick``)."""
    batches, depths = (LENET_BATCHES[:2], MLP_DEPTHS[:2]) if quick else (LENET_BATCHES, MLP_DEPTHS)
    return [("lenet", b) for b in batches] + [("mlp", d) for d in depths]


def worker(args) -> None:
    """Child process: measure every workload at ``args.threads[0]`` threads, write JSON."""
    threads = args.threads[0]
    import torch

    torch.set_num_threads(threads)
    rows = []
    for kind, size in workloads(args.quick):
        load, t0 = os.getloadavg()[0], time.perf_counter()
        row = measure(kind, size, args.repeats, args.seconds)
        elapsed = time.perf_counter() - t0
        row.update(threads=threads, load=[load, os.getloadavg()[0]], elapsed_s=elapsed)
        rows.append(row)
        print(format_row(row), flush=True)
    with open(args.worker_out, "w") as f:
        json.dump(rows, f)


def pin(threads: int) -> None:
    """Keep this process on ``threads`` of the cores it may use."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cores[: max(1, threads)])


def run_children(args) -> list:
    """Run one child process per thread count; their rows, in order."""
    rows = []
    for threads in args.threads:
        env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
        env.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")  # the profiler's allocator warnings
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        cmd = [sys.executable, os.path.abspath(__file__), "--worker-out", out]
        cmd += ["--threads", str(threads), "--repeats", str(args.repeats)]
        cmd += ["--seconds", str(args.seconds)] + (["--quick"] if args.quick else [])
        print(f"-- {threads} thread(s)", flush=True)
        child = subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True)
        noise = ("USDT:",)  # the profiler's start/stop lines
        sys.stderr.write(
            "".join(s for s in child.stderr.splitlines(True) if not s.startswith(noise))
        )
        child.check_returncode()
        with open(out) as f:
            rows += json.load(f)
        os.unlink(out)
    return rows


def label(row: dict) -> str:
    """The workload's name in the table: ``LeNet-5 batch 64``, ``MLP 8 layers``."""
    if row["workload"] == "lenet":
        return f"LeNet-5 batch {row['size']}"
    return f"MLP {row['size']} layers"


HEADER = (
    f"{'workload':<20} {'thr':>3} {'eager ms':>9} {'comp ms':>8} {'torch ms':>9} "
    f"{'eag/t':>6} {'cmp/t':>6}   python share e/c/t   peak MiB e/c/t     load"
)


def format_row(row: dict) -> str:
    """One line of the table: times, ratios, Python shares, peak memory, load before/after."""
    t = row["step_s"]
    share = "/".join(f"{row['python_share'][k] * 100:3.0f}%" for k in CONTENDERS)
    peak = "/".join(f"{row['peak_bytes'][k] * MIB:.1f}" for k in CONTENDERS)
    ratio_e = t["ember eager"] / t["torch eager"]
    ratio_c = t["ember compiled"] / t["torch eager"]
    return (
        f"{label(row):<20} {row['threads']:>3} {t['ember eager'] * 1e3:9.2f} "
        f"{t['ember compiled'] * 1e3:8.2f} {t['torch eager'] * 1e3:9.2f} "
        f"{ratio_e:5.2f}x {ratio_c:5.2f}x   {share:<19} {peak:<18} "
        f"{row['load'][0]:.1f}-{row['load'][1]:.1f}"
    )


RATIO_TICKS = (0.25, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.7, 2.0, 3.0, 4.0)


def plot(rows: list, path: str) -> None:
    """Step-time ratio ember / PyTorch eager (top, log scale) and Python share (bottom), against
    LeNet's batch size (left) and the MLP's depth (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex="col")
    styles = {1: "--", 2: "-"}
    colors = dict(zip(CONTENDERS, ("tab:orange", "tab:blue", "tab:gray")))
    for col, (kind, xlabel) in enumerate((("lenet", "LeNet-5 batch size"), ("mlp", "MLP depth"))):
        ratio_ax, share_ax = axes[0][col], axes[1][col]
        for threads in sorted({r["threads"] for r in rows}):
            sel = sorted((r for r in rows if r["workload"] == kind and r["threads"] == threads),
                         key=lambda r: r["size"])  # fmt: skip
            xs = [r["size"] for r in sel]
            for name in CONTENDERS:
                ls, tag = styles.get(threads, ":"), f"{name}, {threads} thr"
                if name != "torch eager":
                    ys = [r["step_s"][name] / r["step_s"]["torch eager"] for r in sel]
                    ratio_ax.plot(xs, ys, ls, marker="o", color=colors[name], label=tag)
                ys = [r["python_share"][name] * 100 for r in sel]
                share_ax.plot(xs, ys, ls, marker="o", color=colors[name], label=tag)
        ratio_ax.axhline(1.0, color="black", lw=0.8)
        ratio_ax.set_yscale("log", base=2)  # 2x slower and 2x faster lie as far from 1
        lo, hi = ratio_ax.get_ylim()  # ticks inside the data's range (log2 has few there)
        ticks = [t for t in RATIO_TICKS if lo <= t <= hi]
        ratio_ax.yaxis.set_major_locator(FixedLocator(ticks))
        ratio_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        ratio_ax.yaxis.set_minor_formatter(NullFormatter())
        ratio_ax.set_ylabel("step time, ember / PyTorch eager")
        share_ax.set_ylabel("Python share of the step (%)")
        share_ax.set_xlabel(xlabel)
        sizes = sorted({r["size"] for r in rows if r["workload"] == kind})
        for ax in (ratio_ax, share_ax):
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes, [str(x) for x in sizes])
            ax.minorticks_off()
            ax.grid(True, alpha=0.3)
        ratio_ax.legend(fontsize=8)
        share_ax.legend(fontsize=7)
    loads = [x for r in rows for x in r["load"]]
    fig.suptitle(
        f"ember vs PyTorch eager, CPU training step (load {min(loads):.1f}-{max(loads):.1f}; "
        "LeNet-5 SGD, MLP width 256 Adam batch 64)"
    )
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (~1 minute)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=None, help="best of (5; 2 with --quick)")
    parser.add_argument("--seconds", type=float, default=None, help="per timing (0.5; 0.03 quick)")
    parser.add_argument("--json", default=None, help="results file")
    parser.add_argument("--png", default=None, help="picture file")
    parser.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.seconds = args.seconds or (0.03 if args.quick else 0.5)
    if args.worker_out:
        pin(args.threads[0])
        worker(args)
        return
    quick_dir = os.path.join(tempfile.gettempdir(), "ember-scaling-quick")
    json_path = args.json or (
        os.path.join(quick_dir, "scaling.json")
        if args.quick
        else os.path.join(ROOT, "benchmarks", "results", "scaling.json")
    )
    png_path = args.png or (
        os.path.join(quick_dir, "scaling.png")
        if args.quick
        else os.path.join(ROOT, "docs", "images", "scaling.png")
    )
    t0 = time.perf_counter()
    print(HEADER)
    rows = run_children(args)
    print("\n" + HEADER)
    for row in rows:
        print(format_row(row))
    os.makedirs(os.path.dirname(json_path) or ".", exist_ok=True)
    with open(json_path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}, f, indent=1)
    plot(rows, png_path)
    print(f"\nwrote {json_path} and {png_path} ({time.perf_counter() - t0:.0f} s)")
    print(
        "ratios < 1 mean ember is faster; python share: fraction of the step outside op "
        "bodies (e/c/t: ember eager / compiled / torch eager); peak: one step, above the "
        "level before it"
    )


if __name__ == "__main__":
    main()
