"""Two-layer-net autograd loop (CS231n lecture 8): ember vs PyTorch eager vs NumPy by hand.

N=64, D_in=1000, H=100, D_out=10; forward ``x.mm(w1).clamp(min=0).mm(w2)``, squared-error
loss, ``backward()``, SGD under ``no_grad``, ``grad.zero_()``. Runs the three in one process,
alternating, best of several repeats, and prints per-step times and ratios.

    python benchmarks/two_layer_net.py [--steps 200] [--repeats 7]
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_of

N, D_IN, H, D_OUT = 64, 1000, 100, 10
LR = 1e-6


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    f = np.float32
    return (
        rng.standard_normal((N, D_IN)).astype(f),
        rng.standard_normal((N, D_OUT)).astype(f),
        rng.standard_normal((D_IN, H)).astype(f),
        rng.standard_normal((H, D_OUT)).astype(f),
    )


def tutorial_loop(torch, data):
    """The lecture's PyTorch code, run by whichever library is passed in as ``torch``."""
    x, y, w1, w2 = (torch.from_numpy(a.copy()) for a in data)
    w1.requires_grad_()
    w2.requires_grad_()

    def step():
        nonlocal w1, w2
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w1 -= LR * w1.grad
            w2 -= LR * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
        return loss

    return step


def ember_loop(data):
    import ember

    return tutorial_loop(ember, data)


def torch_loop(data):
    import torch

    torch.set_num_threads(2)
    return tutorial_loop(torch, data)


def numpy_loop(data):
    x, y, w1, w2 = (a.copy() for a in data)

    def step():
        nonlocal w1, w2
        h = x @ w1
        h_relu = np.maximum(h, 0)
        y_pred = h_relu @ w2
        diff = y_pred - y
        loss = np.square(diff).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = grad_y_pred @ w2.T
        grad_h[h < 0] = 0
        grad_w1 = x.T @ grad_h
        w1 -= np.float32(LR) * grad_w1
        w2 -= np.float32(LR) * grad_w2
        return loss

    return step


def _value(loss) -> float:
    return float(loss.detach()) if hasattr(loss, "detach") else float(loss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    data = make_data()
    loops = {"ember": ember_loop(data), "numpy": numpy_loop(data)}
    try:
        loops["torch"] = torch_loop(data)
    except ImportError:
        print("PyTorch not installed: comparing with NumPy only")
    first = {name: _value(step()) for name, step in loops.items()}  # same data: same loss
    ref = first["numpy"]
    for name, value in first.items():
        if abs(value - ref) > 1e-4 * abs(ref):
            raise SystemExit(f"{name} computed loss {value}, NumPy {ref}: results differ")
    best = best_of(loops, args.repeats, args.steps)
    for name, t in best.items():
        print(f"{name:>6}: {t * 1e6:8.1f} us/step")
    if "torch" in best:
        print(f"ember / torch eager: {best['ember'] / best['torch']:.2f}x")
    print(f"ember / numpy by hand: {best['ember'] / best['numpy']:.2f}x")


if __name__ == "__main__":
    main()
