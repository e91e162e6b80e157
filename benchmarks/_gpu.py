"""What the GPU benchmarks share: the ``--device`` argument, the no-GPU exit, synchronized
timing (``best_of`` over chunks of steps that end with each library's own synchronize).

GPU work is asynchronous: a step returns when its kernels are queued. So each timed unit is
``steps`` calls followed by a synchronize of that library's device, and the per-step time is
the chunk's time divided by ``steps``; libraries still take turns, best of ``repeats``.
"""

from __future__ import annotations

import argparse
import contextlib

from _timing import best_of

# ``--dtypes`` entries that are not a plain dtype: the model and inputs stay float32 and
# ``amp_bfloat16`` runs forward + loss under each library's bfloat16 autocast, ``tf32`` allows
# TensorFloat-32 for matmul and cuDNN in both libraries (ember's own baseline for amp)
AMP_PREFIX = "amp_"


def storage_dtype(dtype_name: str) -> str:
    """The dtype the model and inputs are cast to for a ``--dtypes`` entry: ``float32`` for
    ``amp_*`` and ``tf32``, the entry itself otherwise."""
    if dtype_name.startswith(AMP_PREFIX) or dtype_name == "tf32":
        return "float32"
    return dtype_name


def autocast_for(lib, device: str, dtype_name: str):
    """``None``, or for an ``amp_<dtype>`` entry a zero-argument factory of ``lib.autocast``
    on ``device``'s type (cuda or cpu) with that dtype (for ``_timing.train_step``)."""
    if not dtype_name.startswith(AMP_PREFIX):
        return None
    device_type = device.split(":")[0]
    dtype = getattr(lib, dtype_name[len(AMP_PREFIX) :])
    return lambda: lib.autocast(device_type, dtype=dtype)


@contextlib.contextmanager
def precision_flags(dtype_name: str, ember, torch):
    """Inside, for the ``tf32`` entry, both libraries may use TF32 for float32 matmuls and
    cuDNN convolutions; the previous settings come back afterwards. Other entries: no change
    (both libraries' defaults: TF32 off for matmul, on for cuDNN)."""
    if dtype_name != "tf32":
        yield
        return
    libs = (
        (ember.backends.cuda.matmul, ember.backends.cudnn),
        (torch.backends.cuda.matmul, torch.backends.cudnn),
    )
    saved = [(m.allow_tf32, c.allow_tf32) for m, c in libs]
    try:
        for m, c in libs:
            m.allow_tf32 = True
            c.allow_tf32 = True
        yield
    finally:
        for (m, c), (m_old, c_old) in zip(libs, saved):
            m.allow_tf32 = m_old
            c.allow_tf32 = c_old


def amp_summary(model: str, results: dict) -> str | None:
    """The issue's mixed-precision line from ``{dtypes entry: best seconds by name}``: ember's
    ``amp_bfloat16`` throughput against PyTorch's (eager >= 0.7x, compiled >= 1.0x) and
    against ember's own ``tf32`` (>= 1.3x, eager and compiled); None without amp_bfloat16."""
    amp = results.get("amp_bfloat16")
    if amp is None:
        return None
    parts = [
        f"ember amp eager / torch amp eager {amp['torch eager'] / amp['ember eager']:.2f}x "
        "(target >= 0.7x)"
    ]
    if "ember compiled" in amp:
        parts.append(
            "ember amp compiled / torch amp eager "
            f"{amp['torch eager'] / amp['ember compiled']:.2f}x (target >= 1.0x)"
        )
    tf32 = results.get("tf32")
    if tf32 is not None:
        own = [
            f"{key.split()[1]} {tf32[key] / amp[key]:.2f}x"
            for key in ("ember eager", "ember compiled")
            if key in amp and key in tf32
        ]
        parts.append(f"ember amp / ember tf32: {', '.join(own)} (target >= 1.3x)")
    return f"{model} amp_bfloat16 summary: " + "; ".join(parts)


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


def check_losses(name: str, estep, tstep, tol: float, steps: int = 2) -> list:
    """Exit unless ember's and PyTorch's first ``steps`` losses agree within ``tol``
    (relative, absolute below 1); returns ember's losses."""
    losses = []
    for i in range(steps):
        le, lt = float(estep().item()), float(tstep().item())
        if not abs(le - lt) <= tol * max(abs(lt), 1.0):
            raise SystemExit(f"{name} step {i}: ember loss {le}, torch {lt}: differ")
        losses.append(le)
    return losses


def time_steps_against_torch(
    ember, tstep, estep, syncs: tuple, make_compiled, steps, repeats, expect=(), tol=0.0
):
    """``(best seconds per step by name, how the compiled step ran)``: PyTorch eager, ember
    eager and, when ``make_compiled`` is given, ``ember.compile(make_compiled())`` after its
    warm-up, capture and a replay ("CUDA graph" or "no graph", with any warning); its first
    losses must match ``expect`` (ember eager's from the same weights) within ``tol``."""
    import warnings

    esync, tsync = syncs
    runs = {"torch eager": tstep, "ember eager": estep}
    sync = {"torch eager": tsync, "ember eager": esync}
    how = ""
    if make_compiled is not None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cstep = ember.compile(make_compiled())
            losses = [float(cstep().item()) for _ in range(3)]  # warm-up, capture, a replay
        for i, (lc, le) in enumerate(zip(losses, expect)):
            if not abs(lc - le) <= tol * max(abs(le), 1.0):
                raise SystemExit(f"step {i}: ember compiled loss {lc}, eager {le}: differ")
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
    eager_losses = check_losses(dtype_name, estep, tstep, tol)
    compiled = None
    if args.compiled:

        def compiled():
            return build(ember, ember_model(), data, dev, dtype_name)

    syncs = synchronizers(dev, ember, torch)
    best, how = time_steps_against_torch(
        ember, tstep, estep, syncs, compiled, args.steps, args.repeats, eager_losses, tol
    )
    return best, how, estep
