"""Count the GPU launches of one eager training step, on the strict fake CuPy (no GPU needed).

An eager GPU step is bound by the host: every launch is a CuPy call from Python (15-30 us on an
H100, see docs/gpu.md), so the number of launches per step is what eager speed work cuts. This
runs the GPU benchmarks' steps on the fake CuPy of ``tests/_fakecupy`` with its g++-emulated
kernels on (a fused kernel counts as one launch, as on a GPU) and counts every launch the fake
sees (ufuncs, functions, copies, ``ElementwiseKernel`` / ``RawKernel`` calls), grouped by the
innermost ember source line that made it. cuDNN is the kernel tests' stand-in
(``tests/backend/_fakecudnn.py``): each graph it executes (a convolution, attention) counts as
one launch.

    python tools/launch_count.py transformer --dtype amp_bfloat16 [--top 30] [--depth 3]
    python tools/launch_count.py resnet18 --dtype float32      (also bfloat16; mlp)
    python tools/launch_count.py resnet18 --compiled   (the ``ember.compile`` step, run without a
                                                        CUDA graph: the kernels a replay runs)

Also printed: the arrays made empty (``cupy.empty``: pool memory, no kernel).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]


def install_fake():
    """The fake CuPy (kernels on) as ember's cuda backend, with the stand-in cuDNN frontend of
    the kernel tests (convolutions and attention); returns the fake's modules to patch."""
    import ember
    from tests import _fakecupy
    from tests._fakecupy import _array, _functions, _gpu
    from tests.backend import _fakecudnn

    fake = _fakecupy.reset(kernels=True)
    ember.backend.cuda.install(fake)
    sys.modules["cupy"], sys.modules["cupyx"] = fake, fake.cupyx
    ember.backends.cudnn._module[:] = [_fakecudnn]  # it reads the fake's buffers by address
    return _gpu, _array, _functions, _fakecudnn


class Counter:
    """Counts launches by the innermost ember frame that made them."""

    def __init__(self, depth: int = 1) -> None:
        self.on, self.depth = False, depth
        self.allocations = 0
        self.sites: collections.Counter = collections.Counter()

    def hit(self) -> None:
        if not self.on:
            return
        sites = []
        for frame in reversed(traceback.extract_stack(limit=60)[:-2]):
            path = frame.filename.replace(os.sep, "/")
            if "/ember/" in path and "/tests/" not in path:
                sites.append(f"{path.split('/ember/', 1)[1]}:{frame.lineno} {frame.name}")
                if len(sites) == self.depth:
                    break
        self.sites[" < ".join(sites) or "?"] += 1


def patch(counter: Counter, gpu, array, functions, cudnn) -> None:
    record, launch, run = gpu.record, array.ndarray._launch, functions.run
    execute = cudnn.pygraph.execute

    def counted_execute(self, *args, **kwargs):  # one cuDNN graph: one launch
        counter.hit()
        return execute(self, *args, **kwargs)

    cudnn.pygraph.execute = counted_execute

    def counted_record(thunk):
        counter.hit()
        record(thunk)

    def counted_launch(self, fn):
        if gpu.capturing() is None:
            counter.hit()
        return launch(self, fn)

    def counted_run(fn, args, cur):
        res = run(fn, args, cur)
        srcs = array.sources(args)  # CuPy returns an input itself (ascontiguousarray & co.)
        fresh = [
            r
            for r in functions._flat(res)
            if type(r) is array.ndarray and r._base is None and id(r._a) not in srcs
        ]
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        name = getattr(cells["np_fn"].cell_contents, "__name__", "") if "np_fn" in cells else ""
        if name in ALLOCATIONS:  # memory from the pool, no kernel
            counter.allocations += counter.on
        elif gpu.capturing() is None and (fresh or any(functions._outs(args))):
            counter.hit()
        return res

    gpu.record, array.ndarray._launch, functions.run = counted_record, counted_launch, counted_run


def transformer_step(ember, dtype: str, layers: int = 6):
    from _gpu import autocast_for, storage_dtype
    from _timing import train_step
    from gpu_transformer import VOCAB, Shape, model_for

    s = Shape(False, f"{layers},64,4,128,16,2")  # the benchmark's depth, small widths
    rng = np.random.default_rng(0)
    model = model_for(ember, s).to("cuda").to(getattr(ember, storage_dtype(dtype)))
    opt = ember.optim.Adam(model.parameters(), lr=1e-4)
    x = ember.tensor(rng.standard_normal((s.batch, s.seq, s.width)).astype(np.float32))
    x = x.to("cuda").to(getattr(ember, storage_dtype(dtype)))
    y = ember.tensor(rng.integers(0, VOCAB, s.batch * s.seq)).to("cuda")
    ce = ember.nn.functional.cross_entropy
    return train_step(opt, ce, model, x, y, autocast=autocast_for(ember, "cuda", dtype)), layers


def mlp_step(ember, dtype: str):
    from _gpu import autocast_for, storage_dtype
    from _timing import train_step

    nn = ember.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
    model = model.to(getattr(ember, storage_dtype(dtype)))
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    x = ember.randn(32, 64).to("cuda").to(getattr(ember, storage_dtype(dtype)))
    y = ember.randint(0, 10, (32,)).to("cuda")
    ce = nn.functional.cross_entropy
    return train_step(opt, ce, model, x, y, autocast=autocast_for(ember, "cuda", dtype)), 1


def resnet18_step(ember, dtype: str):
    from _gpu import autocast_for, storage_dtype
    from _timing import train_step

    from ember.models import resnet18

    model = resnet18(num_classes=10).to("cuda").to(getattr(ember, storage_dtype(dtype)))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = ember.randn(2, 3, 32, 32).to("cuda").to(getattr(ember, storage_dtype(dtype)))
    y = ember.randint(0, 10, (2,)).to("cuda")
    ce = ember.nn.functional.cross_entropy
    return train_step(opt, ce, model, x, y, autocast=autocast_for(ember, "cuda", dtype)), 8


ALLOCATIONS = {"empty", "empty_like"}
STEPS = {"transformer": transformer_step, "mlp": mlp_step, "resnet18": resnet18_step}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(STEPS))
    parser.add_argument("--dtype", default="float32", help="float32, bfloat16, amp_bfloat16")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--depth", type=int, default=1, help="ember frames named per site")
    parser.add_argument("--compiled", action="store_true", help="count the compiled step's")
    args = parser.parse_args()
    fakes = install_fake()
    import ember

    counter = Counter(args.depth)
    patch(counter, *fakes)
    step, layers = STEPS[args.model](ember, args.dtype)
    if args.compiled:  # a second trace follows the first step (the optimizer's state appears)
        step = ember.compile(step, cuda_graph=False)
    for _ in range(3):
        step()
    counter.on = True
    step()
    counter.on = False
    total = sum(counter.sites.values())
    kind = "compiled" if args.compiled else "eager"
    print(
        f"{args.model} {args.dtype}: {total} launches in one {kind} step ({layers} blocks), "
        f"and {counter.allocations} empty arrays"
    )
    for site, n in counter.sites.most_common(args.top):
        print(f"{n:6d}  {site}")
    from ember.backend.kernels import attention, conv

    refused = sorted(conv._warned | attention._warned)
    if refused:  # the op's body ran instead: the counts are not a GPU's
        print(f"warning: the cuDNN stand-in refused {', '.join(refused)} plans (see the warnings)")


if __name__ == "__main__":
    main()
