"""The nccl backend at 2 ranks on the strict fake CuPy (one fake GPU per rank; the fake's NCCL
moves the ranks' data over MPI): the id from rank 0, each rank on GPU LOCAL_RANK, every
collective against NumPy (float32, bfloat16, int64), point to point, cpu tensors and objects
over MPI beside NCCL, and 2-rank NCCL DDP (eager, and compiled as a replayed CUDA graph) equal
to 1-rank training on the combined batch (5 SGD-momentum steps, 1e-5)."""

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))

import ember  # noqa: E402
import ember.distributed as dist  # noqa: E402
from ember.backend.kernels import cublas as _cublas  # noqa: E402
from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from tests import _fakecupy  # noqa: E402
from tests._fakecupy._functions import cublas_matmul  # noqa: E402
from tests.distributed._ddp_case import Net, train  # noqa: E402

fake = _fakecupy.reset()
ember.backend.cuda.install(fake)
sys.modules["cupy"], sys.modules["cupyx"] = fake, fake.cupyx
_cublas.matmul = lambda cp, a, b, out=None: cublas_matmul(a, b, out=out)

dist.init_process_group("nccl")
R, N = dist.get_rank(), dist.get_world_size()
pg = dist.group.WORLD
assert dist.get_backend() == "nccl" and pg.nccl.device == R == ember.cuda.current_device()


def gpu(a):
    return ember.tensor(a).to("cuda")


def host(t):
    return t.detach().cpu().numpy()


cases = 0


def check(got, want, what, tol=0.0):
    global cases
    cases += 1
    np.testing.assert_allclose(
        np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol, err_msg=what
    )


bf16 = ember.dtypes.bfloat16.np
for dt in (np.float32, bf16, np.int64):
    mine = [(np.arange(6).reshape(2, 3) + 1 + 10 * r).astype(dt) for r in range(N)]
    x = mine[R]
    stack = np.stack([m.astype(np.float64) for m in mine])
    tol = 1e-2 if dt is bf16 else 0.0
    for op, ref in (("SUM", stack.sum(0)), ("MAX", stack.max(0)), ("MIN", stack.min(0))):
        t = gpu(x)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        check(host(t), ref, f"all_reduce {op} {dt}", tol)
    t = gpu(x)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT, async_op=True).wait()
    check(host(t), stack.prod(0), f"all_reduce PRODUCT async {dt}", tol)
    if dt is not np.int64:
        t = gpu(x)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        check(host(t), stack.mean(0), f"all_reduce AVG {dt}", tol)
    t = gpu(x)
    dist.broadcast(t, src=1)
    check(host(t), mine[1], f"broadcast {dt}")
    out = gpu(np.zeros((N * 2, 3), dt))
    dist.all_gather_into_tensor(out, gpu(x))
    check(host(out), np.concatenate(mine), f"all_gather_into_tensor {dt}")
    outs = [gpu(np.zeros_like(x)) for _ in range(N)]
    dist.all_gather(outs, gpu(x))
    check(np.stack([host(o) for o in outs]), stack, f"all_gather {dt}")
    out = gpu(np.zeros(3, dt))
    dist.reduce_scatter_tensor(out, gpu(x.reshape(-1)))
    check(host(out), stack.sum(0).reshape(-1)[3 * R : 3 * R + 3], f"reduce_scatter {dt}", tol)
    t = gpu(x)
    dist.reduce(t, dst=1)
    check(host(t), stack.sum(0) if R == 1 else x, f"reduce {dt}", tol)
    got = [gpu(np.zeros_like(x)) for _ in range(N)] if R == 0 else None
    dist.gather(gpu(x), got, dst=0)
    if R == 0:
        check(np.stack([host(g) for g in got]), stack, f"gather {dt}")
    t = gpu(np.zeros_like(x))
    dist.scatter(t, [gpu(m) for m in mine] if R == 1 else None, src=1)
    check(host(t), mine[R], f"scatter {dt}")
    t = gpu(x)
    if R == 0:
        dist.isend(t, dst=1).wait()
    else:
        dist.irecv(t, src=0).wait()
        check(host(t), mine[0], f"send/recv {dt}")
dist.barrier()
cpu = ember.ones(2) * (R + 1)  # cpu tensors and objects: over MPI, beside NCCL
dist.all_reduce(cpu)
check(cpu.numpy(), [3, 3], "cpu all_reduce over MPI")
objs = [None] * N
dist.all_gather_object(objs, {"rank": R})
assert objs == [{"rank": r} for r in range(N)], objs
print(f"rank {R}: {cases} nccl collective cases passed", flush=True)


ember.manual_seed(3)
reference, _ = train(Net().to("cuda"))
for compiled in (False, True):
    ember.manual_seed(3 if R == 0 else 4)  # rank 1 starts elsewhere: DDP copies rank 0's
    ddp = DDP(Net().to("cuda"), bucket_cap_mb=0.0001)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a compiled step without a CUDA graph
        params, run = train(ddp, compiled=compiled, rank=R)
    for a, b in zip(reference, params):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    if compiled:
        runner = run._latest.runner
        assert runner.disabled is None and runner.captures == 1 and runner.replays >= 2
print(f"rank {R}: 2-rank NCCL DDP (eager, CUDA graph) == 1-rank training", flush=True)
dist.destroy_process_group()
