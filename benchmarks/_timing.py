"""Timing shared by the benchmarks: alternate the contenders, keep the best of several repeats.

Machines here are shared and noisy, so every script measures ember and its peer in one
process, takes turns between them, and reports the best time of each.
"""

from __future__ import annotations

import time


def time_steps(step, steps: int) -> float:
    """Seconds per call of ``step()`` over ``steps`` calls, after one warm-up call."""
    step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps


def train_step(opt, loss_fn, model, x, y, autocast=None):
    """A training-step closure: zero the gradients, ``loss_fn(model(x), y)``, backward, optimizer
    step; returns the loss. Both libraries' steps are built by it, so they do the same work.

    ``autocast`` (a zero-argument callable returning a context manager, e.g.
    ``lambda: torch.autocast("cuda", dtype=torch.bfloat16)``) wraps the forward and the loss
    only; backward and the optimizer step run outside it, as PyTorch's AMP recipe has it."""

    if autocast is None:

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    def amp_step():
        opt.zero_grad()
        with autocast():
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return amp_step


def best_of(runs: dict, repeats: int, steps: int) -> dict:
    """``{name: best seconds per step}``, taking turns between the ``runs`` each repeat."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, step in runs.items():
            best[name] = min(best[name], time_steps(step, steps))
    return best


def profile(step, steps: int, rows: int = 25) -> None:
    """Print cProfile's busiest functions over ``steps`` calls of ``step``."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.runcall(time_steps, step, steps)
    pstats.Stats(prof).sort_stats("tottime").print_stats(rows)


def compiled_args(description: str, steps: int, repeats: int):
    """Arguments of the compiled-step benchmarks; ``--no-jit`` turns numba kernels off (it must
    be set before ember's passes are imported)."""
    import argparse
    import os

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--no-jit", action="store_true", help="NumPy path only (no numba)")
    parser.add_argument("--profile", action="store_true", help="cProfile the compiled step")
    args = parser.parse_args()
    if args.no_jit:
        os.environ["EMBER_JIT"] = "0"
    return args


def compile_and_check(ember, raw_step, torch_step):
    """``(compiled step, seconds to first result, seconds until numba kernels are ready)``,
    after checking three compiled losses against PyTorch's from the same weights and data."""
    from ember.static import passes

    t0 = time.perf_counter()
    cstep = ember.compile(raw_step)
    first = cstep()
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    passes.wait_for_kernels()
    t_kernels = time.perf_counter() - t0
    losses = [float(first.item())] + [float(cstep().item()) for _ in range(2)]
    for i, lc in enumerate(losses):
        lt = float(torch_step().item())
        if abs(lc - lt) > 1e-4 * abs(lt):
            raise SystemExit(f"step {i}: compiled loss {lc}, torch loss {lt}: results differ")
    t0 = time.perf_counter()
    with_native_runs(cstep)
    t_kernels += time.perf_counter() - t0
    return cstep, t_compile, t_kernels


def with_native_runs(step) -> None:
    """Run a compiled step until its plan asked for its numba runs (``ember.static.native``),
    then wait for them and every other kernel: timings after this see the step as it stays."""
    from ember.static import native, passes

    for _ in range(native.ASK_AFTER + 1):
        step()
    passes.wait_for_kernels()


def check_losses(step_a, step_b, steps: int = 3, names: tuple = ("ember", "torch")) -> None:
    """Run both steps ``steps`` times and stop the benchmark if a pair of losses differs by more
    than 1e-4 relative: the contenders must start from the same weights and data."""
    for i in range(steps):
        la, lb = float(step_a().item()), float(step_b().item())
        if abs(la - lb) > 1e-4 * abs(lb):
            raise SystemExit(
                f"step {i}: {names[0]} loss {la}, {names[1]} loss {lb}: results differ"
            )


def steps_for(runs: dict, seconds: float, most: int = 1000) -> int:
    """Steps per timing so that the slowest of ``runs`` takes about ``seconds`` (each run is
    called twice: a warm-up, then one timed call)."""
    slowest = 0.0
    for step in runs.values():
        step()
        t0 = time.perf_counter()
        step()
        slowest = max(slowest, time.perf_counter() - t0)
    return max(1, min(most, round(seconds / max(slowest, 1e-9))))
