"""Per-op dispatch overhead: ember vs PyTorch eager vs raw NumPy on small tensors.

On small tensors the arithmetic is nearly free, so these timings measure what each library
adds per call in Python/C++ (argument handling, dtype promotion, output wrapping, autograd
bookkeeping). Each case runs the three libraries alternately, ``--repeats`` times, and keeps
the best mean of ``--number`` calls. With ``--device cuda`` the tensors live on the GPU and
the raw column is CuPy: a GPU runs these small kernels in a few microseconds, so the figures
are each library's host cost per launch (the kernels queue behind it; each timed chunk ends
with a synchronize), including a bfloat16 product.

    python benchmarks/dispatch_overhead.py [--number 20000] [--repeats 7] [--device cuda]
"""

from __future__ import annotations

import argparse
import timeit

import ml_dtypes
import numpy as np


def make_cases(device: str = "cpu"):
    """(name, {library: (statement, namespace)}) for every case; the raw library is NumPy on
    the CPU and CuPy on cuda."""
    import ember

    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 10)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((64, 100)).astype(np.float32)
    w = rng.standard_normal((100, 10)).astype(np.float32)
    s = rng.standard_normal((64, 10)).astype(np.float32)

    arrays = dict(a=a, b=b, x=x, w=w, s=s)

    def env(lib, grad: bool):
        if lib == "numpy":
            if device == "cuda":
                import cupy

                raw = {k: cupy.asarray(v) for k, v in arrays.items()}
                return {**raw, "np": cupy, "xh": raw["x"].astype(ml_dtypes.bfloat16),
                        "wh": raw["w"].astype(ml_dtypes.bfloat16)}  # fmt: skip
            return {**arrays, "np": np, "xh": x.astype(ml_dtypes.bfloat16),
                    "wh": w.astype(ml_dtypes.bfloat16)}  # fmt: skip
        mod = ember if lib == "ember" else torch
        t = {k: mod.from_numpy(v.copy()).to(device) for k, v in arrays.items()}
        t["xh"], t["wh"] = t["x"].to(mod.bfloat16), t["w"].to(mod.bfloat16)
        if grad:
            for k in ("a", "w"):
                t[k].requires_grad_()
        return t

    libs = ["ember", "numpy"] + (["torch"] if torch is not None else [])
    cases = []
    for name, stmt, np_stmt in [
        ("add 64x10 + 64x10", "a + b", "a + b"),
        ("mul by Python scalar", "a * 2.0", "a * np.float32(2.0)"),
        ("mm 64x100 @ 100x10", "x.mm(w)", "x @ w"),
        ("mm bfloat16", "xh.mm(wh)", "xh @ wh"),
        ("relu (clamp min=0)", "a.clamp(min=0)", "np.maximum(a, 0)"),
        ("sum to scalar", "a.sum()", "a.sum()"),
    ]:
        for grad in (False, True):
            label = f"{name}{' (grad)' if grad else ''}"
            row = {}
            for lib in libs:
                if lib == "numpy":
                    if not grad:
                        row[lib] = (np_stmt, env(lib, False))
                else:
                    row[lib] = (stmt, env(lib, grad))
            cases.append((label, row))
    # one small forward + backward: what an eager training step pays per op on top of forward
    fb = "l = (a * s).sum(); l.backward(); a.grad = None"
    fb_np = "g = s.copy(); l = (a * s).sum()"
    cases.append(
        (
            "mul+sum+backward 64x10",
            {lib: (fb if lib != "numpy" else fb_np, env(lib, True)) for lib in libs},
        )
    )
    return cases


def _synchronize(device: str):
    """Wait for every library's queued GPU work (a no-op on the CPU)."""
    if device != "cuda":
        return lambda: None
    import cupy
    import torch

    def sync():
        cupy.cuda.Device().synchronize()
        torch.cuda.synchronize()

    return sync


def _timed(timer, number: int, sync) -> float:
    """Seconds for ``number`` calls, the GPU work they queued included."""
    import time

    t0 = time.perf_counter()
    timer.timeit(number)
    sync()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (raw column: CuPy)")
    args = parser.parse_args()
    cases = make_cases(args.device)
    sync = _synchronize(args.device)
    raw = "cupy" if args.device == "cuda" else "numpy"
    print(f"{'case':32s} {'ember':>9s} {'torch':>9s} {raw:>9s}   ember/torch  ember/{raw}")
    for label, row in cases:
        timers = {lib: timeit.Timer(stmt, globals=ns) for lib, (stmt, ns) in row.items()}
        for t in timers.values():
            t.timeit(200)  # warm up
        best = {lib: float("inf") for lib in timers}
        number = args.number if "backward" not in label else max(1, args.number // 5)
        for _ in range(args.repeats):
            for lib, t in timers.items():
                sync()
                best[lib] = min(best[lib], _timed(t, number, sync) / number)
        us = {lib: v * 1e6 for lib, v in best.items()}

        def cell(lib, us=us):
            return f"{us[lib]:8.2f}u" if lib in us else f"{'-':>9s}"

        r_t = f"{us['ember'] / us['torch']:11.2f}x" if "torch" in us else f"{'-':>12s}"
        r_n = f"{us['ember'] / us['numpy']:11.2f}x" if "numpy" in us else f"{'-':>12s}"
        print(f"{label:32s} {cell('ember')} {cell('torch')} {cell('numpy')} {r_t} {r_n}")
    print(
        "times are microseconds per call (best of repeats); numpy has no autograd, so its "
        "'grad' rows are left out and its backward row is the forward arithmetic only"
    )


if __name__ == "__main__":
    main()
