"""Transformer encoder training throughput on the GPU: ember vs PyTorch eager, bfloat16 and float32.

``nn.TransformerEncoder`` (6 layers, width 768, 12 heads, feed-forward 3072, batch-first,
post-norm, dropout 0 so both libraries compute the same thing) with a linear head over a
1,000-token vocabulary, on sequences of 512 tokens, batch 16 (the shapes of the GPU-speed
issue): embeddings in, ``cross_entropy`` over every position, ``backward``, Adam (lr 1e-4).
Both start from the same weights (PyTorch's, copied through ``state_dict``) and data; the
first losses must agree before timing. bfloat16 casts the model and the inputs (no autocast:
both libraries train fully in bfloat16). ember runs eagerly and, with ``--compiled``, as one
``ember.compile`` step. Chunks of steps end with a synchronize; runs alternate; best of repeats.

Prints tokens/s of each and ember / PyTorch throughput (targets: compiled bf16 >= 1.0x).
Without a GPU it exits with a message; ``--device cpu --steps 1 --small`` is a smoke run.

    python benchmarks/gpu_transformer.py [--steps 10] [--repeats 3] [--dtypes bfloat16,float32]
        [--compiled] [--small] [--device cuda]
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import compare_with_torch, gpu_args, require_device  # noqa: E402
from _timing import train_step  # noqa: E402

VOCAB = 1000


class Shape:
    """The benchmark's sizes: the issue's, or a small set for a CPU smoke run."""

    def __init__(self, small: bool):
        sizes = (2, 64, 4, 128) if small else (6, 768, 12, 3072)
        self.layers, self.width, self.heads, self.ff = sizes
        self.seq, self.batch = (16, 2) if small else (512, 16)


def model_for(lib, s: Shape):
    """Encoder stack + vocabulary head, same parameter names in both libraries."""
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(
                s.width, s.heads, s.ff, dropout=0.0, batch_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, s.layers)
            self.head = nn.Linear(s.width, VOCAB)

        def forward(self, x):
            return self.head(self.encoder(x)).reshape(-1, VOCAB)

    return Encoder()


def build(lib, model, data, device: str, dtype_name: str):
    dtype = getattr(lib, dtype_name)
    model.to(device)
    model.to(dtype)
    model.train()
    opt = lib.optim.Adam(model.parameters(), lr=1e-4)
    x = lib.from_numpy(data[0].copy()).to(device).to(dtype)
    y = lib.from_numpy(data[1].copy()).to(device)
    return train_step(opt, lib.nn.functional.cross_entropy, model, x, y)


def main() -> None:
    args = gpu_args(
        __doc__.splitlines()[0],
        steps=10,
        repeats=3,
        **{
            "--dtypes": {"default": "bfloat16,float32"},
            "--compiled": {"action": "store_true", "help": "also time ember.compile"},
            "--small": {"action": "store_true", "help": "tiny sizes (CPU smoke run)"},
        },
    )
    ember, torch = require_device(args.device)
    dev = args.device
    s = Shape(args.small)
    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((s.batch, s.seq, s.width)).astype(np.float32),
        rng.integers(0, VOCAB, s.batch * s.seq).astype(np.int64),
    )
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu"
    tokens = s.batch * s.seq
    print(
        f"Transformer encoder training step: {s.layers} layers, width {s.width}, sequence "
        f"{s.seq}, batch {s.batch}, Adam, device {dev} ({name})"
    )
    for dtype_name in args.dtypes.split(","):
        torch.manual_seed(0)
        tmodel = model_for(torch, s)
        state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}

        def ember_model(state=state):
            m = model_for(ember, s)
            m.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
            return m

        tol = 1e-2 if dtype_name == "float32" else 5e-2
        best, how, estep = compare_with_torch(
            ember, torch, build, (tmodel, ember_model), data, dev, dtype_name, tol, args
        )
        print(f"{dtype_name}:" + (f" (ember compiled: {how})" if how else ""))
        for key, t in best.items():
            print(f"  {key:>15}: {tokens / t:10.0f} tokens/s ({t * 1e3:8.2f} ms/step)")
        for key in [k for k in best if k != "torch eager"]:
            print(f"  {key} / torch eager throughput: {best['torch eager'] / best[key]:.2f}x")


if __name__ == "__main__":
    main()
