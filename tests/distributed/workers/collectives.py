"""2 ranks: every collective against NumPy, float32 and bfloat16, sync and async (one launch).

Rank r's tensor is ``base * (r + 1) + r`` with small whole numbers, so sums and extremes are
exact in bfloat16; products are compared after one rounding, as ember computes them.
"""

import numpy as np

import ember
import ember.distributed as dist

dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
assert N == 2, N
BASE = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
DTYPES = {"float32": ember.float32, "bfloat16": ember.bfloat16}
cases = 0


def data(r, dt, scale=1):
    return (BASE * (r + 1) + r) * scale


def t_of(a, dt):
    return ember.tensor(a, dtype=dt)


def check(name, got, want, dt):
    global cases
    want = np.asarray(want, np.float32)
    if dt is ember.bfloat16:
        want = want.astype(ember.bfloat16.np).astype(np.float32)
    got = got.float().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{name} on rank {R}")
    cases += 1


def run(fn, async_op):
    """Call a collective with async_op and wait on its Work (which must not be None)."""
    work = fn(async_op)
    if async_op:
        assert work is not None and work.wait() and work.is_completed()
    else:
        assert work is None


ALL = [data(r, None) for r in range(N)]
REDUCE = {
    dist.ReduceOp.SUM: sum(ALL),
    dist.ReduceOp.AVG: sum(ALL) / N,
    dist.ReduceOp.PRODUCT: ALL[0] * ALL[1],
    dist.ReduceOp.MIN: np.minimum(*ALL),
    dist.ReduceOp.MAX: np.maximum(*ALL),
}

for dname, dt in DTYPES.items():
    for async_op in (False, True):
        tag = f"{dname} async={async_op}"
        for op, want in REDUCE.items():
            x = t_of(data(R, dt), dt)
            run(lambda a, x=x, op=op: dist.all_reduce(x, op=op, async_op=a), async_op)
            check(f"all_reduce {op.name} {tag}", x, want, dt)

        x = t_of(data(R, dt), dt)
        run(lambda a, x=x: dist.broadcast(x, src=1, async_op=a), async_op)
        check(f"broadcast {tag}", x, ALL[1], dt)

        outs = [ember.zeros(3, 4, dtype=dt) for _ in range(N)]
        x = t_of(data(R, dt), dt)
        run(lambda a, o=outs, x=x: dist.all_gather(o, x, async_op=a), async_op)
        for r in range(N):
            check(f"all_gather[{r}] {tag}", outs[r], ALL[r], dt)

        for shape in ((N * 3, 4), (N, 3, 4)):
            out = ember.zeros(*shape, dtype=dt)
            x = t_of(data(R, dt), dt)
            run(lambda a, o=out, x=x: dist.all_gather_into_tensor(o, x, async_op=a), async_op)
            check(f"all_gather_into_tensor {shape} {tag}", out, np.stack(ALL).reshape(shape), dt)

        ins = [t_of(data(R, dt, scale=i + 1), dt) for i in range(N)]
        out = ember.zeros(3, 4, dtype=dt)
        run(lambda a, o=out, i=ins: dist.reduce_scatter(o, i, async_op=a), async_op)
        check(f"reduce_scatter {tag}", out, sum(data(r, dt, scale=R + 1) for r in range(N)), dt)

        big = t_of(np.concatenate([data(R, dt, scale=i + 1) for i in range(N)]), dt)
        out = ember.zeros(3, 4, dtype=dt)
        run(
            lambda a, o=out, b=big: dist.reduce_scatter_tensor(
                o, b, op=dist.ReduceOp.MAX, async_op=a
            ),
            async_op,
        )
        check(
            f"reduce_scatter_tensor MAX {tag}",
            out,
            np.maximum(*[data(r, dt, scale=R + 1) for r in range(N)]),
            dt,
        )

        x = t_of(data(R, dt), dt)
        run(lambda a, x=x: dist.reduce(x, dst=1, async_op=a), async_op)
        check(f"reduce {tag}", x, sum(ALL) if R == 1 else ALL[R], dt)

        lst = [ember.zeros(3, 4, dtype=dt) for _ in range(N)] if R == 0 else None
        x = t_of(data(R, dt), dt)
        run(lambda a, g=lst, x=x: dist.gather(x, g, dst=0, async_op=a), async_op)
        if R == 0:
            for r in range(N):
                check(f"gather[{r}] {tag}", lst[r], ALL[r], dt)

        x = ember.zeros(3, 4, dtype=dt)
        lst = [t_of(data(r, dt, scale=7), dt) for r in range(N)] if R == 1 else None
        run(lambda a, x=x, s=lst: dist.scatter(x, s, src=1, async_op=a), async_op)
        check(f"scatter {tag}", x, data(R, dt, scale=7), dt)

        # point to point: rank 0 sends, rank 1 receives (from any rank when async)
        x = t_of(data(0, dt), dt) if R == 0 else ember.zeros(3, 4, dtype=dt)
        if async_op:
            w = dist.isend(x, dst=1) if R == 0 else dist.irecv(x)
            assert w.wait()
        elif R == 0:
            dist.send(x, dst=1)
        else:
            assert dist.recv(x, src=0) == 0
        check(f"send/recv {tag}", x, ALL[0], dt)

        run(lambda a: dist.barrier(async_op=a), async_op)

# integer and bool reductions, a non-contiguous tensor, versions bumped
x = ember.tensor([R + 1, 10 * (R + 1)], dtype=ember.int64)
dist.all_reduce(x, op=dist.ReduceOp.PRODUCT)
assert x.tolist() == [2, 200], x
b = ember.tensor([R == 0, False, True])
dist.all_reduce(b)  # SUM of bools is a logical or, as in PyTorch
assert b.tolist() == [True, False, True], b
m = ember.zeros(4, 6)
col = m[:, 1]
v = col._version[0]
col.copy_(ember.full((4,), float(R + 1)))
dist.all_reduce(col)
assert m[:, 1].tolist() == [3.0] * 4 and m.sum().item() == 12.0 and col._version[0] > v + 1

# the object forms
objs = [None] * N
dist.all_gather_object(objs, {"rank": R})
assert objs == [{"rank": 0}, {"rank": 1}], objs
lst = [{"lr": 0.1}, "x"] if R == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [{"lr": 0.1}, "x"], lst
got = [None] * N if R == 1 else None
dist.gather_object(("hi", R), got, dst=1)
assert R == 0 or got == [("hi", 0), ("hi", 1)], got
out = [None]
dist.scatter_object_list(out, [[1], [2, 2]] if R == 0 else None, src=0)
assert out == [[[1], [2, 2]][R]], out
if R == 0:
    dist.send_object_list(["a", 2], dst=1)
else:
    lst = [None, None]
    assert dist.recv_object_list(lst) == 0 and lst == ["a", 2], lst

# groups: a group of rank 1 alone, and the pair again
solo = dist.new_group([1])
pair = dist.new_group([0, 1])
if R == 1:
    assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
    x = ember.ones(2)
    dist.all_reduce(x, group=solo)
    assert x.tolist() == [1.0, 1.0]
else:
    assert dist.get_rank(solo) == -1
x = ember.ones(2) * (R + 1)
dist.broadcast(x, src=1, group=pair)
assert x.tolist() == [2.0, 2.0]

# ember.compile: all_reduce is a graph op of the compiled step (eager == compiled)
w = ember.zeros(3)


@ember.compile
def step(g):
    g2 = g * 2
    dist.all_reduce(g2)
    w.add_(g2)
    return g2.sum()


for _ in range(2):
    s = step(ember.full((3,), float(R + 1)))
    assert s.item() == 18.0, s
assert w.tolist() == [12.0] * 3, w

# errors name the collective, shapes and dtypes
try:
    dist.all_gather_into_tensor(ember.zeros(5), ember.zeros(3))
except ember.ShapeError as e:
    assert "all_gather_into_tensor" in str(e) and "(5,)" in str(e), e
else:
    raise AssertionError("no error")
try:
    dist.all_reduce(ember.ones(2, dtype=ember.int32), op=dist.ReduceOp.AVG)
except ember.DTypeError as e:
    assert "all_reduce" in str(e) and "int32" in str(e), e
else:
    raise AssertionError("no error")

dist.barrier()
print(f"rank {R}: {cases} collective cases passed", flush=True)
dist.destroy_process_group()
