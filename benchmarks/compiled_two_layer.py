"""Compiled two-layer-net Adam step: ``ember.compile`` vs ember eager vs PyTorch eager.

``Sequential(Linear(1000, 100), ReLU(), Linear(100, 10))``, ``mse_loss``, ``Adam(lr=1e-3)``,
batch N=64, float32 (the model of benchmarks/nn_two_layer_adam.py). The whole step
(``zero_grad``, forward, ``backward``, ``step``) is one compiled graph, run through the optimizer
passes (``ember.static.passes``). All three start from the same weights and the compiled
step's losses are checked against PyTorch's before timing. Runs alternate; best of repeats.

Prints us/step, compiled / PyTorch eager (target <= 0.4x), and the time of the first compile
(trace + passes + first run; target < 1 s). With numba installed (``pip install ember[jit]``)
the fused kernels compile in a background thread (the first call never waits; the kernels
then load from the disk cache in later processes); the timing waits for them first.

    python benchmarks/compiled_two_layer.py [--steps 300] [--repeats 7] [--no-jit] [--profile]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import best_of, compile_and_check, compiled_args, profile  # noqa: E402
from nn_two_layer_adam import D_IN, D_OUT, H, N, build, make_data  # noqa: E402


def main() -> None:
    args = compiled_args(__doc__.splitlines()[0], steps=300, repeats=7)
    import torch

    import ember
    from ember.backend import jit as _jit

    torch.set_num_threads(os.cpu_count() or 1)
    data = make_data()
    torch.manual_seed(0)
    _, tstep = build(torch, data)
    state = {k: v.detach().numpy().copy() for k, v in _.state_dict().items()}
    _, estep = build(ember, data, state)
    _, raw = build(ember, data, state)
    cstep, t_compile, t_kernels = compile_and_check(ember, raw, tstep)
    if args.profile:
        profile(cstep, args.steps, 20)
    runs = {"ember compiled": cstep, "torch eager": tstep, "ember eager": estep}
    best = best_of(runs, args.repeats, args.steps)
    jit = "numba" if _jit.enabled() else "off (NumPy path)"
    g, opt = cstep.graph, cstep.optimized_graph
    print(
        f"compiled two-layer nn + mse + Adam, N={N}, {D_IN}-{H}-{D_OUT}, float32, "
        f"torch threads={torch.get_num_threads()}, jit kernels: {jit}"
    )
    print(f"graph: {len(g.nodes)} nodes traced, {len(opt.nodes)} after the passes")
    for name, t in best.items():
        print(f"{name:>15}: {t * 1e6:8.1f} us/step")
    ratio = best["ember compiled"] / best["torch eager"]
    print(f"ember compiled / torch eager: {ratio:.2f}x (target <= 0.4x)")
    print(f"first compile (trace + passes + first step): {t_compile:.3f} s (target < 1 s)")
    if _jit.enabled():
        print(f"  numba kernels ready {t_kernels:.2f} s later (background; disk-cached)")


if __name__ == "__main__":
    main()
