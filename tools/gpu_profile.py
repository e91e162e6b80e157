"""Where a GPU step's time goes: wall time per step against the GPU's busy time, and the
busiest kernels (CUPTI through ``torch.profiler``, which records every kernel of the process,
CuPy's and cuDNN's included), for ember's ResNet-18 and Transformer steps (eager and compiled)
and PyTorch's. Run on the device machine from the project root:

    python tools/gpu_profile.py [resnet18|transformer ...] [--rows 25] [--cprofile] [--dump DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
import warnings

import numpy as np

PYTHON_PROFILE = False
DUMP_DIR = None  # --dump: where each cProfile's raw statistics go (pstats files)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))


def _wall(step, sync, n: int) -> tuple[float, float]:
    """(ms per step with a synchronize at the end, ms per step to queue the work)."""
    step()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    t1 = time.perf_counter()
    sync()
    t2 = time.perf_counter()
    return (t2 - t0) / n * 1e3, (t1 - t0) / n * 1e3


def _kernels(torch, step, sync, n: int, rows: int) -> None:
    from torch.profiler import ProfilerActivity, profile

    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            step()
        sync()
    events = [e for e in prof.key_averages() if e.self_device_time_total > 0]
    events.sort(key=lambda e: -e.self_device_time_total)
    total = sum(e.self_device_time_total for e in events) / n / 1e3
    print(f"    GPU busy {total:.2f} ms/step in {sum(e.count for e in events) // n} kernels")
    for e in events[:rows]:
        t = e.self_device_time_total / n / 1e3
        print(f"    {t:7.3f} ms {e.count // n:5d}x  {e.key[:110]}")


def python_profile(step, sync, n: int, rows: int, name: str = "step") -> None:
    """cProfile of ``n`` steps: the busiest functions by own time and by cumulative time (and
    the raw statistics in ``DUMP_DIR/name.pstats`` with ``--dump``, for pstats elsewhere)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        step()
    sync()
    prof.disable()
    if DUMP_DIR:
        os.makedirs(DUMP_DIR, exist_ok=True)
        prof.dump_stats(os.path.join(DUMP_DIR, f"{name}.pstats"))
    for key in ("tottime", "cumulative"):
        print(f"    -- cProfile of {n} steps by {key}")
        pstats.Stats(prof, stream=sys.stdout).sort_stats(key).print_stats(rows)


def report(name, torch, step, sync, rows: int) -> None:
    wall, queue = _wall(step, sync, 5)
    print(f"== {name}: {wall:.2f} ms/step wall, {queue:.2f} ms/step to queue", flush=True)
    try:
        _kernels(torch, step, sync, 3, rows)
    except Exception as e:  # a profiler that cannot see the kernels still leaves the times
        print(f"    profiler failed: {type(e).__name__}: {e}")
    sys.stdout.flush()


def resnet18(ember, torch, rows: int) -> None:
    import gpu_resnet18 as b

    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((256, 3, 32, 32)).astype(np.float32),
        rng.integers(0, 10, 256).astype(np.int64),
    )
    for dt in ("float32", "bfloat16"):
        report(f"torch ResNet-18 {dt}", torch, b.build(torch, b.torch_resnet18(torch), data,
               "cuda", dt), torch.cuda.synchronize, rows)  # fmt: skip
        from ember.models import resnet18

        eager = b.build(ember, resnet18(num_classes=10), data, "cuda", dt)
        report(f"ember ResNet-18 {dt} eager", torch, eager, ember.cuda.synchronize, rows)
        if PYTHON_PROFILE and dt == "float32":
            python_profile(eager, ember.cuda.synchronize, 5, rows, "resnet18-eager")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = ember.compile(b.build(ember, resnet18(num_classes=10), data, "cuda", dt))
            for _ in range(3):
                c()
        for w in caught:
            print(f"    warning: {str(w.message)[:300]}")
        report(f"ember ResNet-18 {dt} compiled", torch, c, ember.cuda.synchronize, rows)


def transformer(ember, torch, rows: int) -> None:
    import gpu_transformer as b

    s = b.Shape(False)
    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((s.batch, s.seq, s.width)).astype(np.float32),
        rng.integers(0, b.VOCAB, s.batch * s.seq).astype(np.int64),
    )
    dt = "bfloat16"
    report("torch Transformer bf16", torch, b.build(torch, b.model_for(torch, s), data, "cuda",
           dt), torch.cuda.synchronize, rows)  # fmt: skip
    eager = b.build(ember, b.model_for(ember, s), data, "cuda", dt)
    report("ember Transformer bf16 eager", torch, eager, ember.cuda.synchronize, rows)
    if PYTHON_PROFILE:
        python_profile(eager, ember.cuda.synchronize, 3, rows, "transformer-eager")
        amp = b.build(ember, b.model_for(ember, s), data, "cuda", "amp_bfloat16")
        report("ember Transformer amp_bfloat16 eager", torch, amp, ember.cuda.synchronize, rows)
        python_profile(amp, ember.cuda.synchronize, 3, rows, "transformer-amp-eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = ember.compile(b.build(ember, b.model_for(ember, s), data, "cuda", dt))
        for _ in range(3):
            c()
    for w in caught:
        print(f"    warning: {str(w.message)[:300]}")
    report("ember Transformer bf16 compiled", torch, c, ember.cuda.synchronize, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", default=["resnet18", "transformer"])
    parser.add_argument("--rows", type=int, default=25)
    parser.add_argument("--cprofile", action="store_true", help="cProfile ember's eager step")
    parser.add_argument("--dump", help="a folder for the cProfile statistics (pstats files)")
    args = parser.parse_args()
    global PYTHON_PROFILE, DUMP_DIR
    PYTHON_PROFILE, DUMP_DIR = args.cprofile, args.dump
    import torch

    import ember

    for name in args.which:
        try:
            {"resnet18": resnet18, "transformer": transformer}[name](ember, torch, args.rows)
        except Exception:
            traceback.print_exc()


if __name__ == "__main__":
    main()
