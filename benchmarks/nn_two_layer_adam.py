"""nn two-layer net with Adam: ember vs PyTorch eager, one process, alternating.

``Sequential(Linear(1000, 100), ReLU(), Linear(100, 10))``, ``mse_loss``, ``Adam(lr=1e-3)``,
batch N=64 (float32). Both start from the same weights (copied through ``state_dict``), so
their losses are checked to agree before timing. Best of several repeats; prints per-step
times and the ratio (target: ember <= 1.0x PyTorch). PyTorch gets as many threads as the
machine has cores; ember uses NumPy's BLAS threads.

    python benchmarks/nn_two_layer_adam.py [--steps 300] [--repeats 7] [--profile]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_of, profile, train_step

N, D_IN, H, D_OUT = 64, 1000, 100, 10


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((N, D_IN)).astype(np.float32),
        rng.standard_normal((N, D_OUT)).astype(np.float32),
    )


def build(lib, data, state=None):
    model = lib.nn.Sequential(lib.nn.Linear(D_IN, H), lib.nn.ReLU(), lib.nn.Linear(H, D_OUT))
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = (lib.from_numpy(a.copy()) for a in data)
    mse = lib.nn.functional.mse_loss

    step = train_step(opt, mse, model, x, y)

    return model, step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile ember's step")
    args = parser.parse_args()
    import torch

    import ember

    torch.set_num_threads(os.cpu_count() or 1)
    data = make_data()
    torch.manual_seed(0)
    tmodel, tstep = build(torch, data)
    state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    _, estep = build(ember, data, state)
    for i in range(3):  # same weights, same data: same losses
        le, lt = float(estep().item()), float(tstep().item())
        if abs(le - lt) > 1e-4 * abs(lt):
            raise SystemExit(f"step {i}: ember loss {le}, torch loss {lt}: results differ")
    if args.profile:
        profile(estep, args.steps, 25)
    best = best_of({"ember": estep, "torch": tstep}, args.repeats, args.steps)
    print(
        f"two-layer nn + mse + Adam, N={N}, {D_IN}-{H}-{D_OUT}, float32, "
        f"torch threads={torch.get_num_threads()}"
    )
    for name, t in best.items():
        print(f"{name:>6}: {t * 1e6:8.1f} us/step")
    print(f"ember / torch eager: {best['ember'] / best['torch']:.2f}x (target <= 1.0x)")


if __name__ == "__main__":
    main()
