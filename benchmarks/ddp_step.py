"""A data-parallel training step at 2 ranks: how much DDP costs over each rank training alone,
and how much of the all-reduce backward hides. Run with:

    ember run -n 2 benchmarks/ddp_step.py [--width 1024] [--depth 4] [--batch 64] [--no-torch]

An MLP (``--depth`` hidden layers of ``--width``, ReLU, SGD, cross_entropy), the same per-rank
batch everywhere. Steps timed, every rank at once (the figure is the slower rank's):

- ``alone``: each rank trains its own copy on its batch, no communication (a 1-rank step on
  half the data, with the other rank busy the same way, as under DDP);
- ``DDP``: ``DistributedDataParallel``, buckets all-reduced on the communication thread;
  ``DDP, Iallreduce``: the same with MPI's non-blocking calls instead (the path where MPI gives
  no ``MPI_THREAD_MULTIPLE``);
- ``alone compiled`` / ``DDP compiled``: those two steps under ``ember.compile`` (per bucket an
  ``AllReduceStart`` moved up to where its gradients are made, an ``AllReduceWait`` after
  backward); ``starts in place``: traced without the ``start_collectives_early`` pass (every
  start after the last weight gradient); ``blocking AllReduce``: the earlier graph form, one
  blocking ``AllReduce`` op per bucket;
- ``all-reduce after backward``: the same buckets all-reduced the same way, started only once
  backward has ended (nothing can overlap);
- ``all-reduce alone``: just those buckets' all-reduce, no compute.

Hidden = (after-backward - DDP) / all-reduce alone: the share of the communication that
overlaps backward. With ``torch.distributed`` (gloo over TCP on 127.0.0.1, the port from
``--port``) the same model and batch run under PyTorch's DDP too (1 thread per rank, as
ember's ranks get), first checked to give the same loss. Contenders take turns, best of
``--repeats``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed import _thread
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.nn.parallel._reducer import Reducer
from ember.static import passes

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--width", type=int, default=1024)
p.add_argument("--depth", type=int, default=4)
p.add_argument("--inputs", type=int, default=512)
p.add_argument("--batch", type=int, default=64, help="per rank")
p.add_argument("--bucket-cap-mb", type=float, default=4.0)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--port", type=int, default=29517)
p.add_argument("--no-torch", action="store_true")
args = p.parse_args()

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()


def mlp(lib):
    layers, width = [], args.inputs
    for _ in range(args.depth):
        layers += [lib.nn.Linear(width, args.width), lib.nn.ReLU()]
        width = args.width
    return lib.nn.Sequential(*layers, lib.nn.Linear(width, 10))


ember.manual_seed(0)
model = mlp(ember)
weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
n_params = sum(p.numel() for p in model.parameters())
rng = np.random.default_rng(R)
X = rng.standard_normal((args.batch, args.inputs)).astype(np.float32)
Y = rng.integers(0, 10, args.batch)


def ember_model():
    net = mlp(ember)
    net.load_state_dict({k: ember.tensor(v) for k, v in weights.items()})
    return net


def ember_step(net, after=None):
    opt = ember.optim.SGD(net.parameters(), lr=1e-3)
    x, y = ember.tensor(X), ember.tensor(Y)

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        if after is not None:
            after()
        opt.step()

    return step


def buckets_after_backward(net, buckets):
    """DDP's bucket all-reduce (flatten, AVG, async, then wait and copy back), started after
    backward: ``buckets`` lists each bucket's parameters (``net``'s, DDP's order)."""

    def after():
        works = []
        for params in buckets:
            flat = ember.cat([p.grad.reshape(-1) for p in params])
            works.append((params, flat, dist.all_reduce(flat, dist.ReduceOp.AVG, async_op=True)))
        for params, flat, work in works:
            work.wait()
            off = 0
            for p in params:
                p.grad._data[...] = flat._data[off : off + p.numel()].reshape(p.grad._data.shape)
                off += p.numel()

    return after


ddp = DDP(ember_model(), bucket_cap_mb=args.bucket_cap_mb)
alone = ember_model()
after_net = ember_model()
index = {id(p): i for i, p in enumerate(ddp.module.parameters())}
after_params = list(after_net.parameters())
bucket_params = [[after_params[index[id(p)]] for p in b.params] for b in ddp.reducer.buckets]
flats = [ember.zeros(sum(p.numel() for p in b)) for b in bucket_params]


def allreduce_alone():
    for w in [dist.all_reduce(f, dist.ReduceOp.AVG, async_op=True) for f in flats]:
        w.wait()


def without_thread(step):
    """``step`` with async all-reduces as MPI's non-blocking ``Iallreduce`` (the path taken
    where MPI gives no ``MPI_THREAD_MULTIPLE``), not on the communication thread."""

    def run():
        was, _thread._AVAILABLE = _thread._AVAILABLE, False
        try:
            step()
        finally:
            _thread._AVAILABLE = was

    return run


def in_place_starts(step):
    """``step`` traced without ``passes.start_collectives_early``: each bucket's
    ``AllReduceStart`` stays where the traced backward put it (after every weight gradient)."""

    def run():
        pipeline = passes.PIPELINE[:]
        passes.PIPELINE[:] = [p for p in pipeline if p is not passes.start_collectives_early]
        try:
            step()
        finally:
            passes.PIPELINE[:] = pipeline

    return run


def blocking_all_reduce(step):
    """``step`` traced with DDP's earlier graph form: per bucket a ``Cat`` and a blocking
    ``AllReduce`` op where the bucket's last gradient is made (nothing overlaps it)."""
    from ember.distributed.ops import AllReduce
    from ember.ops.base import apply

    def launch(self, b):
        with ember.no_grad():
            flat = ember.cat([p._grad.reshape(-1) for p in b.params])
            b.flat = apply(AllReduce(self.group, int(dist.ReduceOp.AVG)), flat)

    def write(self):
        with ember.no_grad():
            for b in self.buckets:
                for p, off in zip(b.params, b.offsets):
                    p._grad.copy_(b.flat[off : off + p._data.size].reshape(p.shape))

    def run():
        saved = Reducer._launch_traced, Reducer._write_traced
        Reducer._launch_traced, Reducer._write_traced = launch, write
        try:
            step()
        finally:
            Reducer._launch_traced, Reducer._write_traced = saved

    return run


runs = {
    "ember alone": ember_step(alone),
    "ember DDP": ember_step(ddp),
    "ember DDP, Iallreduce": without_thread(ember_step(ddp)),
    "ember alone compiled": ember.compile(ember_step(ember_model()), verbose=False),
    "ember DDP compiled": ember.compile(
        ember_step(DDP(ember_model(), bucket_cap_mb=args.bucket_cap_mb)), verbose=False
    ),
    "ember DDP compiled, starts in place": in_place_starts(
        ember.compile(
            ember_step(DDP(ember_model(), bucket_cap_mb=args.bucket_cap_mb)), verbose=False
        )
    ),
    "ember DDP compiled, blocking AllReduce": blocking_all_reduce(
        ember.compile(
            ember_step(DDP(ember_model(), bucket_cap_mb=args.bucket_cap_mb)), verbose=False
        )
    ),
    "ember all-reduce after backward": ember_step(
        after_net, buckets_after_backward(after_net, bucket_params)
    ),
    "ember all-reduce alone": allreduce_alone,
}

torch_note = ""
if not args.no_torch:
    try:
        import torch
        import torch.distributed as tdist

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
        tdist.init_process_group("gloo", rank=R, world_size=N)

        def torch_model():
            net = mlp(torch)
            net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
            return net

        def torch_step(net):
            opt = torch.optim.SGD(net.parameters(), lr=1e-3)
            x, y = torch.from_numpy(X), torch.from_numpy(Y)

            def step():
                opt.zero_grad()
                torch.nn.functional.cross_entropy(net(x), y).backward()
                opt.step()

            return step

        tddp = torch.nn.parallel.DistributedDataParallel(
            torch_model(), bucket_cap_mb=args.bucket_cap_mb
        )
        with torch.no_grad():
            ours = ember.nn.functional.cross_entropy(ddp(ember.tensor(X)), ember.tensor(Y)).item()
            theirs = torch.nn.functional.cross_entropy(
                tddp(torch.from_numpy(X)), torch.from_numpy(Y)
            ).item()
        assert abs(ours - theirs) < 1e-4 * max(1.0, abs(theirs)), (ours, theirs)
        runs["torch alone"] = torch_step(torch_model())
        runs["torch DDP (gloo)"] = torch_step(tddp)
    except Exception as e:  # noqa: BLE001  (report why PyTorch's side cannot run here)
        torch_note = f"PyTorch DDP not run: {type(e).__name__}: {e}"


def timed(step) -> float:
    """Seconds per step of ``step``, the slower rank's, after one warm-up step."""
    step()
    dist.barrier()
    t = time.perf_counter()
    for _ in range(args.steps):
        step()
    mine = ember.tensor([(time.perf_counter() - t) / args.steps], dtype=ember.float64)
    dist.all_reduce(mine, dist.ReduceOp.MAX)
    return mine.item()


best = dict.fromkeys(runs, float("inf"))
for _ in range(args.repeats):
    for name, step in runs.items():
        best[name] = min(best[name], timed(step))

if R == 0:
    mb = n_params * 4 / 1e6
    print(
        f"{N} ranks, MLP {args.inputs}-{'-'.join([str(args.width)] * args.depth)}-10 "
        f"({n_params / 1e6:.2f}M parameters, {mb:.1f} MB of gradients in "
        f"{len(ddp.reducer.buckets)} buckets), batch {args.batch} per rank, "
        f"{os.environ.get('OMP_NUM_THREADS', '?')} thread(s) per rank, load average "
        f"{os.getloadavg()[0]:.1f}; best of {args.repeats} x {args.steps} steps"
    )
    for name, s in best.items():
        print(f"  {name:34s} {s * 1e3:8.1f} ms")
    for lib in ("ember", "ember compiled", "torch"):
        alone_s = best.get(f"{lib.split()[0]} alone" + (" compiled" if " " in lib else ""))
        d = best.get(f"{lib} DDP", best.get(f"{lib} DDP (gloo)"))
        if lib == "ember compiled":
            d = best["ember DDP compiled"]
        if d is None or alone_s is None:
            continue
        print(f"  {lib}: DDP / alone {d / alone_s:.2f}x")
    comm = best["ember all-reduce alone"]
    after = best["ember all-reduce after backward"]
    for name in ("ember DDP",):
        exposed, exposed_after = best[name] - best["ember alone"], after - best["ember alone"]
        print(
            f"  {name}: adds {exposed * 1e3:.1f} ms to a step, the all-reduce after backward "
            f"{exposed_after * 1e3:.1f} ms (the all-reduce alone: {comm * 1e3:.1f} ms): "
            f"{(after - best[name]) / comm:.0%} of the all-reduce's time hidden behind "
            f"backward ({1 - exposed / exposed_after:.0%} of the exposed time)"
        )
    if "torch DDP (gloo)" in best:
        print(
            f"  ember DDP / torch DDP (gloo): {best['ember DDP'] / best['torch DDP (gloo)']:.2f}x"
        )
        print(
            "  ember DDP compiled / torch DDP (gloo): "
            f"{best['ember DDP compiled'] / best['torch DDP (gloo)']:.2f}x"
        )
    if torch_note:
        print("  " + torch_note)
