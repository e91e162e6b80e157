"""What the GPU benchmarks share: the ``--device`` argument, the no-GPU exit, synchronized
timing (``best_of`` over chunks of steps that end with each library's own synchronize).

GPU work is asynchronous: a step returns when its kernels are queued. So each timed unit is
``steps`` calls followed by a synchronize of that library's device, and the per-step time is
the chunk's time divided by ``steps``; libraries still take turns, best of ``repeats``.
"""

from __future__ import annotations

import argparse

from _timing import best_of


def gpu_args(description: str, steps: int, repeats: int, **extra) -> argparse.Namespace:
    """``--device`` (cuda; ``cpu`` for a smoke run), ``--steps``, ``--repeats``, ``--profile``
    and the script's ``extra`` options (name -> dict of ``add_argument`` keywords)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (smoke run)")
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--profile", action="store_true", help="cProfile ember's step")
    for name, kw in extra.items():
        parser.add_argument(name, **kw)
    return parser.parse_args()


def require_device(device: str):
    """``(ember, torch)`` after checking that both see ``device``; exits with a message (status
    2) when there is no GPU for a cuda run."""
    import torch

    import ember

    if device.startswith("cuda"):
        if not ember.cuda.is_available():
            raise SystemExit(
                "no GPU for ember: ember.cuda.is_available() is False (no CuPy or no device); "
                "install ember[cuda12] on a machine with an NVIDIA GPU, or run with "
                "--device cpu --steps 2 for a smoke run"
            )
        if not torch.cuda.is_available():
            raise SystemExit(
                "no GPU for PyTorch: torch.cuda.is_available() is False (a CPU-only torch?); "
                "the comparison needs PyTorch with CUDA"
            )
    return ember, torch


def synchronizers(device: str, ember, torch):
    """``(ember_sync, torch_sync)``: wait for each library's queued GPU work (no-ops on cpu)."""
    if not device.startswith("cuda"):
        return (lambda: None), (lambda: None)
    return ember.cuda.synchronize, torch.cuda.synchronize


def chunked(step, sync, steps: int):
    """A callable running ``step`` ``steps`` times and then ``sync()``."""

    def run():
        for _ in range(steps):
            step()
        sync()

    return run


def best_per_step(runs: dict, syncs: dict, steps: int, repeats: int) -> dict:
    """``{name: best seconds per step}``, timing chunks of ``steps`` steps, turns alternating."""
    chunks = {name: chunked(step, syncs[name], steps) for name, step in runs.items()}
    best = best_of(chunks, repeats, 1)
    return {name: t / steps for name, t in best.items()}


def check_losses(name: str, estep, tstep, tol: float, steps: int = 2) -> None:
    """Exit unless ember's and PyTorch's first ``steps`` losses agree within ``tol``
    (relative, absolute below 1)."""
    for i in range(steps):
        le, lt = float(estep().item()), float(tstep().item())
        if not abs(le - lt) <= tol * max(abs(lt), 1.0):
            raise SystemExit(f"{name} step {i}: ember loss {le}, torch {lt}: differ")


def time_steps_against_torch(ember, tstep, estep, syncs: tuple, make_compiled, steps, repeats):
    """``(best seconds per step by name, how the compiled step ran)``: PyTorch eager, ember
    eager and, when ``make_compiled`` is given, ``ember.compile(make_compiled())`` after its
    warm-up, capture and a replay ("CUDA graph" or "no graph", with any warning)."""
    import warnings

    esync, tsync = syncs
    runs = {"torch eager": tstep, "ember eager": estep}
    sync = {"torch eager": tsync, "ember eager": esync}
    how = ""
    if make_compiled is not None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cstep = ember.compile(make_compiled())
            for _ in range(3):  # warm-up, capture, a replay
                cstep()
        runner = cstep._latest.runner
        how = "no graph" if runner is None or runner.disabled else "CUDA graph"
        how += "".join(f"; warning: {w.message}" for w in caught)
        runs["ember compiled"], sync["ember compiled"] = cstep, esync
    return best_per_step(runs, sync, steps, repeats), how


def compare_with_torch(ember, torch, build, models, data, dev: str, dtype_name: str, tol, args):
    """``(best seconds per step by name, how the compiled step ran, ember's eager step)``: both
    libraries' steps built by ``build(lib, model, data, dev, dtype_name)`` from ``models`` =
    (the PyTorch model, a factory of ember models with its weights), their first losses checked
    within ``tol``, then timed (``time_steps_against_torch``; compiled too with
    ``args.compiled``)."""
    tmodel, ember_model = models
    tstep = build(torch, tmodel, data, dev, dtype_name)
    estep = build(ember, ember_model(), data, dev, dtype_name)
    check_losses(dtype_name, estep, tstep, tol)
    compiled = None
    if args.compiled:

        def compiled():
            return build(ember, ember_model(), data, dev, dtype_name)

    syncs = synchronizers(dev, ember, torch)
    best, how = time_steps_against_torch(
        ember, tstep, estep, syncs, compiled, args.steps, args.repeats
    )
    return best, how, estep
