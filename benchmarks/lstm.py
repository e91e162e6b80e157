"""LSTM language-model-sized training step: ember vs PyTorch eager, one process, alternating.

``nn.LSTM(128, 256, num_layers=2)`` over 35 steps of 20 sequences (the word-language-model
example's shape), the mean of the squared outputs as the loss, ``backward``, ``SGD(lr=0.1)``.
Both start from the same weights (copied through ``state_dict``); the first losses are checked
to agree before timing. PyTorch's CPU build runs the layers by oneDNN; ember runs each
direction's steps as one op (``ember.ops.rnn``). Best of several repeats; prints per-step times
and the ratio.

    python benchmarks/lstm.py [--steps 10] [--repeats 7] [--profile]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_of, profile

T, B, IN, HIDDEN, LAYERS = 35, 20, 128, 256, 2


def build(lib, state=None):
    model = lib.nn.LSTM(IN, HIDDEN, num_layers=LAYERS)
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.tensor(np.random.default_rng(0).standard_normal((T, B, IN)).astype(np.float32))

    def step():
        opt.zero_grad()
        out, _ = model(x)
        loss = (out * out).mean()
        loss.backward()
        opt.step()
        return loss

    return model, step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile ember's step")
    args = parser.parse_args()
    import torch

    import ember

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    tmodel, tstep = build(torch)
    state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
    _, estep = build(ember, state)
    first = float(estep().item()), float(tstep().item())
    if abs(first[0] - first[1]) > 1e-5 * abs(first[1]):
        raise SystemExit(f"first losses differ: ember {first[0]}, torch {first[1]}")
    if args.profile:
        profile(estep, args.steps, 25)
    best = best_of({"ember": estep, "torch": tstep}, args.repeats, args.steps)
    print(
        f"LSTM {LAYERS} x {HIDDEN} (input {IN}), {T} steps x {B} sequences, SGD, float32, "
        f"torch threads={torch.get_num_threads()}"
    )
    for name, t in best.items():
        print(f"{name:>6}: {t * 1e3:8.2f} ms/step")
    print(f"ember / torch eager: {best['ember'] / best['torch']:.2f}x")


if __name__ == "__main__":
    main()
