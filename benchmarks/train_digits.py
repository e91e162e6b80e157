"""The main job's training step: ``ember train``'s default model against PyTorch eager.

``ember.models.cnn`` on the bundled 8x8 digits (one input channel): two stages of
(3x3 conv without bias, BatchNorm, ReLU) x 2 with a 2x2 max-pool, global average pool,
Dropout(0.25), Linear(64, 10); batch 64, ``cross_entropy``, Adam(lr=3e-3), train mode, float32.
The PyTorch model is the same architecture defined here with the same state-dict keys, so the
weights are copied through ``state_dict``; losses are checked to agree (with dropout off)
before timing. Also times the same step under ``ember.compile`` (its losses checked too) and an
evaluation pass over the 360 test-split images (batch 256, ``no_grad``). One process,
alternating, best of several repeats.

    python benchmarks/train_digits.py [--steps 50] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_of, train_step, with_native_runs

N = 64


def torch_cnn(torch, dropout: float):
    nn = torch.nn

    def conv_bn(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                *conv_bn(1, 32), *conv_bn(32, 32), nn.MaxPool2d(2),
                *conv_bn(32, 64), *conv_bn(64, 64), nn.MaxPool2d(2),
            )  # fmt: skip
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(64, 10))

        def forward(self, x):
            return self.classifier(self.pool(self.features(x)))

    return SmallCNN()


def digits():
    from ember.data.datasets import Digits

    data = Digits(train=True)
    return data.data.astype(np.float32)[:, None], np.asarray(data.targets, np.int64)


def build(lib, model, images, labels, state=None):
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    model.train()
    opt = lib.optim.Adam(model.parameters(), lr=3e-3)
    x, y = lib.from_numpy(images[:N].copy()), lib.from_numpy(labels[:N].copy())
    ce = lib.nn.functional.cross_entropy

    step = train_step(opt, ce, model, x, y)

    test = lib.from_numpy(images[-360:].copy())

    def evaluate():
        model.eval()
        with lib.no_grad():
            for i in range(0, len(test), 256):
                model(test[i : i + 256]).argmax(1)
        model.train()

    return step, evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import torch

    import ember
    from ember.static import passes

    # the threads OpenBLAS (ember's GEMMs) starts with: one per core unless
    # OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say otherwise (both libraries get the same)
    torch.set_num_threads(ember._config.blas_threads(os.cpu_count() or 1))
    images, labels = digits()

    def pair(dropout):
        torch.manual_seed(0)
        tmodel = torch_cnn(torch, dropout)
        state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
        emodel = ember.models.cnn(in_channels=1, image_size=(8, 8), dropout=dropout)
        estep, eeval = build(ember, emodel, images, labels, state)
        tstep, teval = build(torch, tmodel, images, labels)
        return estep, eeval, tstep, teval

    estep, _, tstep, _ = pair(0.0)
    for i in range(3):  # same weights, same data, no dropout: same losses
        le, lt = float(estep().item()), float(tstep().item())
        if abs(le - lt) > 1e-4 * max(1.0, abs(lt)):
            raise SystemExit(f"step {i}: ember loss {le}, torch loss {lt}: results differ")
    cstep, _, tstep, _ = pair(0.0)
    cstep = ember.compile(cstep)
    for i in range(3):  # the compiled step too
        lc, lt = float(cstep().item()), float(tstep().item())
        if abs(lc - lt) > 1e-4 * max(1.0, abs(lt)):
            raise SystemExit(f"step {i}: compiled loss {lc}, torch loss {lt}: results differ")
    passes.wait_for_kernels()
    estep, eeval, tstep, teval = pair(0.25)
    cstep = ember.compile(pair(0.25)[0])
    with_native_runs(cstep)
    runs = {"ember": estep, "torch": tstep, "ember compiled": cstep}
    best = best_of(runs, args.repeats, args.steps)
    best_eval = best_of({"ember": eeval, "torch": teval}, args.repeats, 5)
    print(
        f"ember train's default step: SmallCNN on 8x8 digits, batch {N}, cross_entropy + Adam, "
        f"float32, torch threads={torch.get_num_threads()}"
    )
    for name in best:
        rate = f"{best[name] * 1e3:7.3f} ms/step ({N / best[name]:6.0f} samples/s)"
        evaluation = (
            f", eval of 360 images {best_eval[name] * 1e3:7.2f} ms" if name in best_eval else ""
        )
        print(f"{name:>14}: {rate}{evaluation}")
    print(
        f"ember / torch eager: step {best['ember'] / best['torch']:.2f}x, "
        f"compiled step {best['ember compiled'] / best['torch']:.2f}x, "
        f"eval {best_eval['ember'] / best_eval['torch']:.2f}x"
    )


if __name__ == "__main__":
    main()
