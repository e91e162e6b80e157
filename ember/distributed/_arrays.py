"""Collectives on raw arrays (NumPy or CuPy): each starts its MPI calls, or on an nccl group
its NCCL calls for CuPy arrays (``_nccl.route`` decides), and returns a ``Work`` whose
``wait()`` finishes them. The tensor functions (``collectives.py``) and the graph ops
(``ops.py``) both end here, so eager code and ``ember.compile`` share one path.

Outputs are written in place into the arrays given (``out``); ``what`` strings name the
collective, its sequence number, shapes and dtypes for errors.

>>> import numpy as np
>>> from ember.distributed import _arrays, group
>>> x = np.ones(3, np.float32)
>>> _arrays.all_reduce(group.resolve(None, "all_reduce"), x).wait()  # doctest: +SKIP
True
"""

from __future__ import annotations

import numpy as np

from . import _nccl, _thread
from ._mpi import Staged, blocking, mpi, mpi_op, raw, reduce_dtype, typed
from .group import ProcessGroup
from .reduce_op import ReduceOp
from .work import Work


def _desc(a) -> str:
    return f"{tuple(a.shape)} {a.dtype}"


def _average(pg: ProcessGroup, buf: np.ndarray, op: ReduceOp) -> None:
    if op == ReduceOp.AVG:
        buf /= pg.size()


def all_reduce(
    pg: ProcessGroup, arr, op: ReduceOp = ReduceOp.SUM, after=None, wait: bool = False
) -> Work:
    """Reduce ``arr`` over the group, in place on every rank. ``wait``: finish it now with
    MPI's blocking call (faster algorithms than the non-blocking ones; a watchdog enforces
    the timeout by ending the job, since a blocking call cannot raise). Otherwise the same
    blocking call runs on the group's communication thread (``_thread``: it moves while the
    caller computes, which a non-blocking MPI call does not), or, where MPI gives no
    ``MPI_THREAD_MULTIPLE``, as a non-blocking ``Iallreduce``."""
    what = pg.begin("all_reduce", (_desc(arr), op.name), f"tensor {_desc(arr)}, {op.name}")
    if _nccl.route(pg, "all_reduce", arr):
        return _nccl.all_reduce(pg, arr, op, what, after)
    mop = mpi_op(op, arr.dtype, "all_reduce")
    s = Staged(arr, reduce_dtype(arr.dtype))
    req = job = None
    if wait:
        with blocking(what, pg.timeout):
            pg.comm.Allreduce(mpi().IN_PLACE, typed(s.buf), mop)
        _average(pg, s.buf, op)
    elif (thread := _thread.of(pg)) is not None:

        def reduce(comm):
            comm.Allreduce(mpi().IN_PLACE, typed(s.buf), mop)
            _average(pg, s.buf, op)  # on the thread too: NumPy releases the GIL for it

        job = thread.submit(_thread.Job(reduce))
    else:
        req = pg.comm.Iallreduce(mpi().IN_PLACE, typed(s.buf), mop)

    def finish():
        if req is not None:
            _average(pg, s.buf, op)
        s.write_back()
        if after is not None:
            after()

    return Work([] if req is None else [req], finish, what, pg.timeout, job=job)


def broadcast(pg: ProcessGroup, arr, root: int, after=None) -> Work:
    """``arr`` of group rank ``root`` copied into ``arr`` on every rank."""
    what = pg.begin("broadcast", (_desc(arr), root), f"tensor {_desc(arr)}, src {root}")
    if _nccl.route(pg, "broadcast", arr):
        return _nccl.broadcast(pg, arr, root, what, after)
    s = Staged(arr)
    req = pg.comm.Ibcast(raw(s.buf), root)
    return Work([req], _then(s.write_back, after), what, pg.timeout)


def all_gather(pg: ProcessGroup, out, arr, after=None) -> Work:
    """Every rank's ``arr`` concatenated in rank order into ``out`` (``size`` times as big)."""
    what = pg.begin("all_gather", (_desc(arr),), f"tensor {_desc(arr)} into {_desc(out)}")
    if _nccl.route(pg, "all_gather", out, arr):
        return _nccl.all_gather(pg, out, arr, what, after)
    send, recv = Staged(arr), Staged(out, read=False)
    req = pg.comm.Iallgather(raw(send.buf), raw(recv.buf))
    return Work([req], _then(recv.write_back, after), what, pg.timeout)


def reduce_scatter(pg: ProcessGroup, out, arr, op: ReduceOp = ReduceOp.SUM, after=None) -> Work:
    """``arr`` reduced over the group, its ``i``-th of ``size`` equal blocks into rank i's
    ``out``."""
    what = pg.begin(
        "reduce_scatter", (_desc(arr), op.name), f"tensor {_desc(arr)} into {_desc(out)}"
    )
    if _nccl.route(pg, "reduce_scatter", out, arr):
        return _nccl.reduce_scatter(pg, out, arr, op, what, after)
    mop = mpi_op(op, arr.dtype, "reduce_scatter")
    dt = reduce_dtype(arr.dtype)
    send, recv = Staged(arr, dt), Staged(out, dt, read=False)
    req = pg.comm.Ireduce_scatter_block(typed(send.buf), typed(recv.buf), mop)

    def finish():
        _average(pg, recv.buf, op)
        recv.write_back()
        if after is not None:
            after()

    return Work([req], finish, what, pg.timeout)


def reduce(pg: ProcessGroup, arr, root: int, op: ReduceOp = ReduceOp.SUM, after=None) -> Work:
    """``arr`` reduced over the group into group rank ``root``'s ``arr``."""
    what = pg.begin("reduce", (_desc(arr), op.name, root), f"tensor {_desc(arr)}, dst {root}")
    if _nccl.route(pg, "reduce", arr):
        return _nccl.reduce(pg, arr, root, op, what, after)
    mop = mpi_op(op, arr.dtype, "reduce")
    s = Staged(arr, reduce_dtype(arr.dtype))
    if pg.rank() == root:
        req = pg.comm.Ireduce(mpi().IN_PLACE, typed(s.buf), mop, root)

        def finish():
            _average(pg, s.buf, op)
            s.write_back()
            if after is not None:
                after()

        return Work([req], finish, what, pg.timeout)
    req = pg.comm.Ireduce(typed(s.buf), None, mop, root)
    return Work([req], _then(None, after), what, pg.timeout)


def gather(pg: ProcessGroup, arr, out, root: int, after=None) -> Work:
    """Every rank's ``arr`` concatenated in rank order into ``out`` on group rank ``root``."""
    what = pg.begin("gather", (_desc(arr), root), f"tensor {_desc(arr)}, dst {root}")
    if _nccl.route(pg, "gather", arr, out):
        return _nccl.gather(pg, arr, out, root, what, after)
    send = Staged(arr)
    if pg.rank() == root:
        recv = Staged(out, read=False)
        req = pg.comm.Igather(raw(send.buf), raw(recv.buf), root)
        return Work([req], _then(recv.write_back, after), what, pg.timeout)
    req = pg.comm.Igather(raw(send.buf), None, root)
    return Work([req], _then(None, after), what, pg.timeout)


def scatter(pg: ProcessGroup, out, arr, root: int, after=None) -> Work:
    """Block i of ``arr`` (on group rank ``root``) into rank i's ``out``."""
    what = pg.begin("scatter", (_desc(out), root), f"tensor {_desc(out)}, src {root}")
    if _nccl.route(pg, "scatter", out, arr):
        return _nccl.scatter(pg, out, arr, root, what, after)
    recv = Staged(out, read=False)
    send = raw(Staged(arr).buf) if pg.rank() == root else None
    req = pg.comm.Iscatter(send, raw(recv.buf), root)
    return Work([req], _then(recv.write_back, after), what, pg.timeout)


def barrier(pg: ProcessGroup) -> Work:
    what = pg.begin("barrier", (), "")
    if pg.nccl is not None and (pg.size() == 1 or not pg.has_mpi()):
        return _nccl.barrier(pg, what)
    return Work([pg.comm.Ibarrier()], lambda: None, what, pg.timeout)


def send(pg: ProcessGroup, arr, dst: int, tag: int) -> Work:
    """``arr`` to group rank ``dst`` (point to point: no sequence check)."""
    what = f"send to rank {dst} on {pg.name} (tensor {_desc(arr)}, tag {tag})"
    if _nccl.route(pg, "send", arr):
        return _nccl.send(pg, arr, dst, what)
    s = Staged(arr)
    return Work([pg.comm.Isend(raw(s.buf), dst, tag)], lambda: None, what, pg.timeout)


def recv(pg: ProcessGroup, out, src: int | None, tag: int, after=None) -> Work:
    """A message into ``out`` from group rank ``src`` (any rank when None); ``Work.result()``
    is the sender's group rank."""
    who = "any rank" if src is None else f"rank {src}"
    what = f"recv from {who} on {pg.name} (tensor {_desc(out)}, tag {tag})"
    if _nccl.route(pg, "recv", out):
        return _nccl.recv(pg, out, src, what, after)
    MPI = mpi()
    r = Staged(out, read=False)
    source = MPI.ANY_SOURCE if src is None else src
    req = pg.comm.Irecv(raw(r.buf), source, tag)
    statuses = [MPI.Status()]

    def finish():
        r.write_back()
        if after is not None:
            after()
        return statuses[0].Get_source()

    return Work([req], finish, what, pg.timeout, statuses)


def _then(first, after):
    def finish():
        if first is not None:
            first()
        if after is not None:
            after()

    return finish


__all__ = [
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "gather",
    "recv",
    "reduce",
    "reduce_scatter",
    "scatter",
    "send",
]
