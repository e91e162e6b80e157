"""Compiled LeNet-5 training step: ``ember.compile`` vs ember eager vs PyTorch eager, and memory.

The model, data and step of benchmarks/lenet5.py (conv 5x5 6 ch pad 2, max-pool 2, conv 5x5
16 ch, max-pool 2, 400-120-84-10 with ReLU; batch 64x1x28x28; ``cross_entropy``;
``SGD(lr=0.01, momentum=0.9)``), the whole step compiled into one graph and run through the
optimizer passes. All start from the same weights; the compiled losses are checked against
PyTorch's first. Runs alternate; best of repeats.

Prints ms/step, compiled / PyTorch eager (target <= 0.7x), the first compile's time (trace +
passes + first step; target < 1 s), and the peak memory of one step (Python's ``tracemalloc``,
which sees NumPy's allocations) eager vs compiled, beside the memory plan's figures for the
graph as traced (every value its own buffer) and as optimized (buffers reused).

    python benchmarks/compiled_lenet5.py [--steps 50] [--repeats 5] [--no-jit] [--profile]
"""

from __future__ import annotations

import os
import sys
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import best_of, compile_and_check, compiled_args, profile  # noqa: E402
from lenet5 import N, build, make_data  # noqa: E402


def peak_bytes(step) -> int:
    """Peak of NumPy/Python allocations during one step (after a warm-up step)."""
    step()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def main() -> None:
    args = compiled_args(__doc__.splitlines()[0], steps=50, repeats=5)
    import torch

    import ember
    from ember.backend import jit as _jit
    from ember.static import passes

    torch.set_num_threads(os.cpu_count() or 1)
    data = make_data()
    torch.manual_seed(0)
    tmodel, tstep, _ = build(torch, data)
    state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    _, estep, _ = build(ember, data, state)
    _, raw, _ = build(ember, data, state)
    cstep, t_compile, t_kernels = compile_and_check(ember, raw, tstep)
    if args.profile:
        profile(cstep, args.steps, 20)
    runs = {"ember compiled": cstep, "torch eager": tstep, "ember eager": estep}
    best = best_of(runs, args.repeats, args.steps)
    mem_eager, mem_compiled = peak_bytes(estep), peak_bytes(cstep)
    g, opt = cstep.graph, cstep.optimized_graph
    plan_traced = passes.memory_plan(g, reuse=False)
    plan_opt = passes.memory_plan(opt)
    jit = "numba" if _jit.enabled() else "off (NumPy path)"
    print(
        f"compiled LeNet-5, batch {N}x1x28x28, cross_entropy + SGD(momentum=0.9), float32, "
        f"torch threads={torch.get_num_threads()}, jit kernels: {jit}"
    )
    print(f"graph: {len(g.nodes)} nodes traced, {len(opt.nodes)} after the passes")
    for name, t in best.items():
        print(f"{name:>15}: {t * 1e3:8.3f} ms/step")
    ratio = best["ember compiled"] / best["torch eager"]
    print(f"ember compiled / torch eager: {ratio:.2f}x (target <= 0.7x)")
    print(f"first compile (trace + passes + first step): {t_compile:.3f} s (target < 1 s)")
    if _jit.enabled():
        print(f"  numba kernels ready {t_kernels:.2f} s later (background; disk-cached)")
    mb = 1 / 2**20
    print(
        f"peak memory of one step (tracemalloc): eager {mem_eager * mb:.2f} MiB, "
        f"compiled {mem_compiled * mb:.2f} MiB ({mem_compiled / mem_eager:.2f}x)"
    )
    print(
        f"memory plan: traced graph, no reuse {plan_traced.peak_bytes * mb:.2f} MiB; "
        f"optimized graph, reuse {plan_opt.peak_bytes * mb:.2f} MiB "
        f"(live at once: {plan_opt.live_peak_bytes * mb:.2f} MiB)"
    )


if __name__ == "__main__":
    main()
