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
