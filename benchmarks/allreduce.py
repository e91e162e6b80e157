"""All-reduce of a 100 MB float32 buffer at N ranks: ember.distributed vs raw mpi4py on the
same buffer, same run. Run with: ember run -n 2 benchmarks/allreduce.py [MB] [repeats]."""

import sys
import time

import ember
import ember.distributed as dist

dist.init_process_group("mpi")
from mpi4py import MPI  # noqa: E402  (after init: MPI is up)

R = dist.get_rank()
mb = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
n = int(mb * 1e6 / 4)
x = ember.ones(n)
arr = x.numpy()
comm = MPI.COMM_WORLD.Dup()


def best(fn) -> float:
    times = []
    for _ in range(repeats):
        comm.Barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


cases = {
    "mpi4py Allreduce (in place)": lambda: comm.Allreduce(MPI.IN_PLACE, [arr, MPI.FLOAT]),
    "ember all_reduce": lambda: dist.all_reduce(x),
    "ember all_reduce async + wait": lambda: dist.all_reduce(x, async_op=True).wait(),
    "ember all_reduce AVG": lambda: dist.all_reduce(x, op=dist.ReduceOp.AVG),
}
for _ in range(2):  # twice, interleaved: the machine is shared
    for name, fn in cases.items():
        s = best(fn)
        if R == 0:
            print(f"{name:32s} {mb:g} MB: {s * 1e3:7.1f} ms  {mb / 1e3 / s:5.2f} GB/s", flush=True)
