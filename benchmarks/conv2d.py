"""Convolution speed: ember vs torch.nn.functional.conv2d (forward + backward), one process.

Input 64x64x32x32, 64 filters 3x3, padding 1, float32. The two are timed alternately (so
machine load hits both alike), ``torch.set_num_threads`` matches the cores NumPy's BLAS uses,
and each figure is the best of the repeats. Also times MaxPool2d(2) forward + backward.

    python benchmarks/conv2d.py [--repeats 7] [--threads N] [--profile]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _best(fn, repeats: int) -> float:
    fn()  # warm up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--profile", action="store_true", help="time ember's phases separately")
    args = ap.parse_args()

    import torch

    import ember
    import ember.nn.functional as F

    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    n, c, hw, o = args.batch, 64, 32, 64
    x_np = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w_np = (rng.standard_normal((o, c, 3, 3)) * 0.05).astype(np.float32)
    g_np = rng.standard_normal((n, o, hw, hw)).astype(np.float32)

    ex = ember.tensor(x_np, requires_grad=True)
    ew = ember.tensor(w_np, requires_grad=True)
    eg = ember.tensor(g_np)
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w_np, requires_grad=True)
    tg = torch.tensor(g_np)

    def e_fwd():
        with ember.no_grad():
            F.conv2d(ex, ew, padding=1)

    def t_fwd():
        with torch.no_grad():
            torch.nn.functional.conv2d(tx, tw, padding=1)

    def e_fb():
        ex.grad = ew.grad = None
        F.conv2d(ex, ew, padding=1).backward(eg)

    def t_fb():
        tx.grad = tw.grad = None
        torch.nn.functional.conv2d(tx, tw, padding=1).backward(tg)

    px = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    epx, tpx = ember.tensor(px, requires_grad=True), torch.tensor(px, requires_grad=True)
    epg, tpg = ember.tensor(g_np[:, :, ::2, ::2].copy()), torch.tensor(g_np[:, :, ::2, ::2].copy())

    def e_pool():
        epx.grad = None
        F.max_pool2d(epx, 2).backward(epg)

    def t_pool():
        tpx.grad = None
        torch.nn.functional.max_pool2d(tpx, 2).backward(tpg)

    # correctness first: the same numbers
    e_fb()
    t_fb()
    for a, b, what in ((ex.grad, tx.grad, "dx"), (ew.grad, tw.grad, "dw")):
        err = np.abs(a.numpy() - b.numpy()).max() / np.abs(b.numpy()).max()
        assert err < 1e-4, f"{what} differs from torch by {err:.2e} (relative)"

    from ember.static import passes

    passes.wait_for_kernels()  # numba's kernels compile in the background: time them, not NumPy
    pairs = [
        ("conv2d forward", e_fwd, t_fwd),
        ("conv2d forward+backward", e_fb, t_fb),
        ("max_pool2d(2) forward+backward", e_pool, t_pool),
    ]
    best = {name: [float("inf"), float("inf")] for name, _, _ in pairs}
    for _ in range(args.repeats):  # alternate so that load on the machine hits both alike
        for name, ef, tf in pairs:
            best[name][0] = min(best[name][0], _best(ef, 1))
            best[name][1] = min(best[name][1], _best(tf, 1))
    print(
        f"input {n}x{c}x{hw}x{hw}, {o} filters 3x3, padding 1, float32; "
        f"torch threads {torch.get_num_threads()}, best of {args.repeats}"
    )
    print(f"{'':32s} {'ember ms':>9s} {'torch ms':>9s} {'ratio':>6s}")
    for name, (e, t) in best.items():
        print(f"{name:32s} {e * 1e3:9.1f} {t * 1e3:9.1f} {e / t:6.2f}")
    if args.profile:
        _profile(ex, ew, eg, args.repeats)


def _profile(ex, ew, eg, repeats: int) -> None:
    """Ember's phases on raw arrays: im2col gather, GEMMs, col2im."""
    from ember.ops import conv as C

    x, w, g = ex.detach().numpy(), ew.detach().numpy(), eg.numpy()
    p = ((1, 1), (1, 1), (1, 1), 1)
    fwd = C.Conv2d(*p)
    gi = C.Conv2dGradInput(tuple(x.shape), *p)
    gw = C.Conv2dGradWeight(tuple(w.shape), *p)
    rows = [
        ("im2col", lambda: C.im2col(np, x, (3, 3), (1, 1), (1, 1), (1, 1))),
        ("Conv2d.forward", lambda: fwd.forward(np, x, w)),
        ("Conv2dGradInput.forward", lambda: gi.forward(np, g, w)),
        ("Conv2dGradWeight.forward", lambda: gw.forward(np, x, g)),
    ]
    for name, fn in rows:
        print(f"  {name:30s} {_best(fn, repeats) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
