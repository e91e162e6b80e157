"""LeNet-5 training step: ember vs PyTorch eager, one process, alternating.

conv 5x5 -> 6 ch (padding 2), ReLU, max-pool 2, conv 5x5 -> 16 ch, ReLU, max-pool 2,
flatten, 400-120-84-10 with ReLU; batch of 64 1x28x28 float32 images, ``cross_entropy``,
``SGD(lr=0.01, momentum=0.9)``. Both start from the same weights (copied through
``state_dict``) and the losses are checked to agree before timing. Best of several repeats;
prints per-step times, the ratio (target: ember <= 1.0x PyTorch) and, with ``--ops``, the
time per layer of ember's forward and backward. PyTorch gets as many threads as the machine
has cores; ember uses NumPy's BLAS threads.

    python benchmarks/lenet5.py [--steps 50] [--repeats 5] [--profile] [--ops]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _timing import best_of, profile, train_step

N = 64


def lenet5(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
    )  # fmt: skip


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, N)


def build(lib, data, state=None):
    model = lenet5(lib)
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.from_numpy(data[0].copy()), lib.from_numpy(data[1].copy())
    ce = lib.nn.functional.cross_entropy

    step = train_step(opt, ce, model, x, y)

    return model, step, x


def per_layer(model, x, lib, repeats: int = 20) -> None:
    """Forward time of each layer and backward time of the whole net (best of ``repeats``)."""
    rows = []
    h = x
    for i, layer in enumerate(model):
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = layer(h)
            best = min(best, time.perf_counter() - t0)
        rows.append((f"{i:2d} {type(layer).__name__}", tuple(out.shape), best))
        h = out
    for name, shape, t in rows:
        print(f"  fwd {name:<12} -> {str(shape):<18} {t * 1e6:8.1f} us")
    y = lib.from_numpy(np.arange(N) % 10)
    best_f = best_b = float("inf")
    for _ in range(repeats):
        model.zero_grad()
        t0 = time.perf_counter()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        best_f, best_b = min(best_f, t1 - t0), min(best_b, t2 - t1)
    print(f"  forward+loss {best_f * 1e6:8.1f} us, backward {best_b * 1e6:8.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile ember's step")
    parser.add_argument("--ops", action="store_true", help="time each layer (both libraries)")
    args = parser.parse_args()
    import torch

    import ember

    torch.set_num_threads(os.cpu_count() or 1)
    data = make_data()
    torch.manual_seed(0)
    tmodel, tstep, tx = build(torch, data)
    state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    emodel, estep, ex = build(ember, data, state)
    for i in range(3):  # same weights, same data: same losses
        le, lt = float(estep().item()), float(tstep().item())
        if abs(le - lt) > 1e-4 * abs(lt):
            raise SystemExit(f"step {i}: ember loss {le}, torch loss {lt}: results differ")
    from ember.static import passes

    passes.wait_for_kernels()  # numba's kernels compile in the background: time them, not NumPy
    if args.ops:
        for name, model, x, lib in (("ember", emodel, ex, ember), ("torch", tmodel, tx, torch)):
            print(f"{name} per layer (best of 20):")
            per_layer(model, x, lib)
    if args.profile:
        profile(estep, args.steps, 25)
    best = best_of({"ember": estep, "torch": tstep}, args.repeats, args.steps)
    print(
        f"LeNet-5, batch {N}x1x28x28, cross_entropy + SGD(momentum=0.9), float32, "
        f"torch threads={torch.get_num_threads()}"
    )
    for name, t in best.items():
        print(f"{name:>6}: {t * 1e3:8.3f} ms/step")
    print(f"ember / torch eager: {best['ember'] / best['torch']:.2f}x (target <= 1.0x)")


if __name__ == "__main__":
    main()
