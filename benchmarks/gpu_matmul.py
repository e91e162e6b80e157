"""8192 x 8192 matrix product on the GPU: ember (CuPy / cuBLAS) vs PyTorch CUDA, bfloat16 and
float32 (issue 6's target: bfloat16 >= 0.9x PyTorch's throughput).

Both libraries multiply the same matrices in one process, taking turns, best of several
repeats (``_timing.best_of``); each timed call is one product followed by a device
synchronize, so the figure is the product's wall time (plus one sync, for both alike). float32
runs with TF32 off in both (PyTorch's and ember's default) unless ``--tf32`` turns it on in both.

    python benchmarks/gpu_matmul.py [--n 8192] [--steps 20] [--repeats 5] [--tf32]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _timing import best_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tf32", action="store_true", help="allow TF32 for float32 in both")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    args = parser.parse_args()

    import ember

    if not ember.cuda.is_available():
        sys.exit(
            "gpu_matmul: no GPU (ember.cuda.is_available() is False: CuPy missing or no device); "
            "nothing to measure"
        )
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and not torch.cuda.is_available():
        print("gpu_matmul: PyTorch has no CUDA here; timing ember alone")
        torch = None

    n = args.n
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n), dtype=np.float32)
    b_np = rng.standard_normal((n, n), dtype=np.float32)
    ember.backends.cuda.matmul.allow_tf32 = args.tf32
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    print(
        f"matmul {n}x{n} @ {n}x{n} on {ember.cuda.get_device_name()}, TF32 for float32: "
        f"{'on' if args.tf32 else 'off'}"
    )
    for name in args.dtypes.split(","):
        measure(ember, torch, name, a_np, b_np, args)


def _step(mul, sync, a, b):
    def step():
        mul(a, b)
        sync()

    return step


def measure(ember, torch, name: str, a_np, b_np, args) -> None:
    """Time one dtype's product in both libraries and print the figures."""
    n = a_np.shape[0]
    dt = getattr(ember, name)
    ea = ember.from_numpy(a_np).to(dt).to("cuda")
    eb = ember.from_numpy(b_np).to(dt).to("cuda")
    runs = {"ember": _step(ember.matmul, ember.cuda.synchronize, ea, eb)}
    if torch is not None:
        tdt = getattr(torch, name)
        ta = torch.from_numpy(a_np).to(tdt).cuda()
        tb = torch.from_numpy(b_np).to(tdt).cuda()
        runs["torch"] = _step(torch.matmul, torch.cuda.synchronize, ta, tb)
        want = (ta @ tb).float().cpu().numpy()
        diff = np.abs((ea @ eb).cpu().float().numpy() - want).max() / np.abs(want).max()
        print(f"  {name}: max |ember - torch| / max |torch| = {diff:.2e}")
    best = best_of(runs, args.repeats, args.steps)
    flops = 2.0 * n**3
    for who, t in best.items():
        print(f"  {name:9s} {who:5s}: {t * 1e3:8.3f} ms  {flops / t / 1e12:7.1f} TFLOP/s")
    if "torch" in best:
        print(f"  {name}: ember throughput / torch = {best['torch'] / best['ember']:.3f}x")


if __name__ == "__main__":
    main()
