"""Transformer encoder training throughput on the GPU: ember vs PyTorch, bf16, fp32, amp, tf32.

``nn.TransformerEncoder`` (6 layers, width 768, 12 heads, feed-forward 3072, batch-first,
post-norm, dropout 0 so both libraries compute the same thing) with a linear head over a
1,000-token vocabulary, on sequences of 512 tokens, batch 16 (the shapes of the GPU-speed
issue): embeddings in, ``cross_entropy`` over every position, ``backward``, Adam (lr 1e-4).
Both start from the same weights (PyTorch's, copied through ``state_dict``) and data; the
first losses must agree before timing (and the compiled step's with ember eager's).
``--dtypes`` entries: ``bfloat16`` casts the model and the inputs (both libraries train fully
in bfloat16); ``float32`` (no TF32 for matmul, both libraries' default); ``amp_bfloat16`` keeps
them float32 and runs forward + loss under ``ember.autocast`` / ``torch.autocast`` (device type
from ``--device``, dtype bfloat16; no GradScaler), backward and Adam outside it; ``tf32`` is
float32 with TF32 allowed for matmul and cuDNN in both libraries (restored afterwards), ember's
own baseline for amp. ember runs eagerly and, with ``--compiled``, as one ``ember.compile`` step
(autocast inside the traced step). Chunks of steps end with a synchronize; runs alternate; best
of repeats.

Prints tokens/s of each and ember / PyTorch throughput (targets: compiled bf16 >= 1.0x); with
``amp_bfloat16`` a summary line: ember amp / torch amp eager (>= 0.7x), ember amp compiled /
torch amp eager (>= 1.0x) and, with ``tf32`` too, ember amp / ember tf32, eager and compiled
(>= 1.3x). Without a GPU it exits with a message; ``--device cpu --steps 1 --small`` is a smoke
run (autocast on the CPU uses bfloat16 too). ``--sizes layers,width,heads,ff,seq,batch`` sets
other sizes: ``--device cpu --dtypes float32 --sizes 2,256,4,1024,128,16`` is the medium model
the CPU figures in benchmarks/README.md use.

    python benchmarks/gpu_transformer.py [--steps 10] [--repeats 3]
        [--dtypes bfloat16,float32,amp_bfloat16,tf32] [--compiled] [--small] [--device cuda]
        [--sizes L,W,H,F,S,B]
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import (  # noqa: E402
    amp_summary,
    autocast_for,
    compare_with_torch,
    gpu_args,
    precision_flags,
    require_device,
    storage_dtype,
)
from _timing import train_step  # noqa: E402

VOCAB = 1000


class Shape:
    """The benchmark's sizes: the issue's, or a small set for a CPU smoke run."""

    def __init__(self, small: bool, sizes: str | None = None):
        if sizes:
            values = [int(v) for v in sizes.split(",")]
            if len(values) != 6:
                raise SystemExit(f"--sizes wants layers,width,heads,ff,seq,batch; got {sizes!r}")
            self.layers, self.width, self.heads, self.ff, self.seq, self.batch = values
            return
        model = (2, 64, 4, 128) if small else (6, 768, 12, 3072)
        self.layers, self.width, self.heads, self.ff = model
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
    dtype = getattr(lib, storage_dtype(dtype_name))
    model.to(device)
    model.to(dtype)
    model.train()
    opt = lib.optim.Adam(model.parameters(), lr=1e-4)
    x = lib.from_numpy(data[0].copy()).to(device).to(dtype)
    y = lib.from_numpy(data[1].copy()).to(device)
    ce = lib.nn.functional.cross_entropy
    return train_step(opt, ce, model, x, y, autocast=autocast_for(lib, device, dtype_name))


def main() -> None:
    args = gpu_args(
        __doc__.splitlines()[0],
        steps=10,
        repeats=3,
        **{
            "--dtypes": {"default": "bfloat16,float32"},
            "--compiled": {"action": "store_true", "help": "also time ember.compile"},
            "--small": {"action": "store_true", "help": "tiny sizes (CPU smoke run)"},
            "--sizes": {"help": "layers,width,heads,ff,seq,batch (other sizes)"},
        },
    )
    ember, torch = require_device(args.device)
    dev = args.device
    s = Shape(args.small, args.sizes)
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
    results = {}
    for dtype_name in args.dtypes.split(","):
        torch.manual_seed(0)
        tmodel = model_for(torch, s)
        state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}

        def ember_model(state=state):
            m = model_for(ember, s)
            m.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
            return m

        # TF32 (10-bit mantissa in the products) needs a little more than float32; bfloat16,
        # whole or under autocast, keeps 8 bits
        tol = {"float32": 1e-2, "tf32": 2e-2}.get(dtype_name, 5e-2)
        with precision_flags(dtype_name, ember, torch):
            best, how, estep = compare_with_torch(
                ember, torch, build, (tmodel, ember_model), data, dev, dtype_name, tol, args
            )
        results[dtype_name] = best
        print(f"{dtype_name}:" + (f" (ember compiled: {how})" if how else ""))
        for key, t in best.items():
            print(f"  {key:>15}: {tokens / t:10.0f} tokens/s ({t * 1e3:8.2f} ms/step)")
        for key in [k for k in best if k != "torch eager"]:
            print(f"  {key} / torch eager throughput: {best['torch eager'] / best[key]:.2f}x")
    line = amp_summary("Transformer", results)
    if line:
        print(line)


if __name__ == "__main__":
    main()
