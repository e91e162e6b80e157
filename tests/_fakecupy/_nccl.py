"""The fake ``cupy.cuda.nccl``: CuPy 14's NCCL bindings for one rank in one process.

Names, constants, signatures and errors are CuPy 14.2's (``cupy_backends.cuda.libs.nccl``;
``tests/distributed/test_fake_nccl.py`` compares them with the real module where it imports).
A communicator runs every collective by reading and writing the memory behind the raw pointers
it is given (the arrays whose ``.data`` was taken: ``_gpu.owner_at``); a pointer that is no
live array's, or one on another GPU than the communicator's, raises ``NcclError`` as a GPU
would fail (an unhandled CUDA error). A world of one rank runs in the process; a world of N
runs as N MPI processes (``ember run -n N``, NCCL rank r = MPI rank r), the ranks' data
exchanged over MPI, and two ranks on one (fake) GPU refused as NCCL refuses them.

Streams: each call names its stream by pointer. On a stream that captures, or that joined a
capture by waiting for an event recorded in it (``_cuda.Event``), the call runs now and is
recorded for ``Graph.launch()`` (as every fake launch), and counts as that stream's work the
capturing stream must wait for before ``end_capture``. ``groupStart`` / ``groupEnd`` defer
sends and receives to the end of the group, where a send to this rank meets its receive; a
send or receive to this rank outside a group would hang on a GPU, and raises here.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _gpu

NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4
NCCL_INT8 = NCCL_CHAR = 0
NCCL_UINT8 = 1
NCCL_INT32 = NCCL_INT = 2
NCCL_UINT32 = 3
NCCL_INT64 = 4
NCCL_UINT64 = 5
NCCL_FLOAT16 = NCCL_HALF = 6
NCCL_FLOAT32 = NCCL_FLOAT = 7
NCCL_FLOAT64 = NCCL_DOUBLE = 8
NCCL_BFLOAT16 = 9

available = True
annotations = None  # CuPy's module has ``from __future__ import annotations`` among its names
_environment = None

_DTYPES = {
    0: np.dtype(np.int8),
    1: np.dtype(np.uint8),
    2: np.dtype(np.int32),
    3: np.dtype(np.uint32),
    4: np.dtype(np.int64),
    5: np.dtype(np.uint64),
    6: np.dtype(np.float16),
    7: np.dtype(np.float32),
    8: np.dtype(np.float64),
}

_MESSAGES = {
    1: "NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error (run with NCCL_DEBUG=INFO for "
    "details)",
    2: "NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    3: "NCCL_ERROR_INTERNAL_ERROR: internal error - please report this issue to the NCCL "
    "developers",
    4: "NCCL_ERROR_INVALID_ARGUMENT: invalid argument (run with NCCL_DEBUG=WARN for details)",
    5: "NCCL_ERROR_INVALID_USAGE: invalid usage (run with NCCL_DEBUG=WARN for details)",
    6: "NCCL_ERROR_REMOTE_ERROR: remote process exited or there was a network error",
}
_CUDA, _ARG, _USAGE = 1, 4, 5


class NcclError(RuntimeError):
    """``cupy.cuda.nccl.NcclError(status)``."""

    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(_MESSAGES[status])  # KeyError for another status, as CuPy's

    def __reduce__(self):
        return (type(self), (self.status,))


def check_status(status: int) -> None:
    if status != 0:
        raise NcclError(status)


def get_version() -> int:
    return 22703


def get_build_version() -> int:
    return 22703


def get_unique_id() -> bytes:
    """A fresh 128-byte id (CuPy 14 returns bytes; older CuPy a tuple)."""
    return os.urandom(128)


_group = {"depth": 0, "calls": []}


def groupStart() -> None:  # noqa: N802  (CuPy's name)
    _group["depth"] += 1


def groupEnd() -> None:  # noqa: N802
    if _group["depth"] == 0:
        raise NcclError(_USAGE)
    _group["depth"] -= 1
    if _group["depth"] == 0:
        calls, _group["calls"] = _group["calls"], []
        _run_group(calls)


def _run_group(calls: list) -> None:
    """A group's sends and receives: those to this rank pair up in order (a receive takes the
    first unmatched send); those to other ranks travel over MPI (sends started first)."""
    own = [c for c in calls if c[4] == c[1]._rank]
    sends = [c for c in own if c[0] == "send"]
    recvs = [c for c in own if c[0] == "recv"]
    if len(sends) != len(recvs):
        raise RuntimeError(
            "fakecupy: an NCCL group whose sends and receives to this rank do not pair up would "
            "hang on a GPU"
        )
    for (_, comm, src, stream, _), (_, _, dst, _, _) in zip(sends, recvs):
        if src.nbytes != dst.nbytes:
            raise NcclError(_ARG)
        comm._launch(stream, [dst], lambda s=src, d=dst: d.write(s.read()))
    others = [c for c in calls if c[4] != c[1]._rank]
    for kind, comm, buf, stream, peer in sorted(others, key=lambda c: c[0] != "send"):
        comm._launch(stream, [buf] if kind == "recv" else [], comm._transfer(kind, buf, peer))


class NcclConfig:
    """``cupy.cuda.nccl.NcclConfig(split_share=0)``."""

    def __init__(self, split_share: int = 0) -> None:
        self.split_share = int(split_share)


class _Buffer:
    """``count`` elements of ``dtype`` at device address ``ptr`` on the communicator's GPU."""

    def __init__(self, ptr: int, count: int, dtype: np.dtype, device: int) -> None:
        self.nbytes = count * dtype.itemsize
        self.owner = _gpu.owner_at(ptr, self.nbytes) if count else None
        if count and (self.owner is None or self.owner._dev != device):
            raise NcclError(_CUDA)  # an illegal address on this GPU
        self.ptr, self.count, self.dtype = ptr, count, dtype

    def read(self) -> np.ndarray:
        if not self.count:
            return np.empty(0, self.dtype)
        raw = (ctypes.c_char * self.nbytes).from_address(self.ptr)
        return np.frombuffer(raw, self.dtype).copy()

    def write(self, values: np.ndarray) -> None:
        if self.count:
            raw = (ctypes.c_char * self.nbytes).from_address(self.ptr)
            np.frombuffer(raw, self.dtype)[...] = values.astype(self.dtype, copy=False)


_REDUCE = {
    NCCL_SUM: np.add,
    NCCL_PROD: np.multiply,
    NCCL_MAX: np.maximum,
    NCCL_MIN: np.minimum,
    NCCL_AVG: np.add,
}
_TAG = 7077


def _mpi_world(ndev: int, rank: int, comm_id: bytes, device: int):
    """Several ranks: one MPI process each (``ember run -n N``), their data over MPI. The
    ranks must agree on the id and sit on different GPUs (NCCL refuses two ranks on one)."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    if world.size != ndev or world.rank != rank:
        raise NotImplementedError(
            f"fakecupy: an NCCL world of {ndev} ranks runs as {ndev} MPI processes, rank r as "
            f"MPI rank r (this is MPI rank {world.rank} of {world.size}, NCCL rank {rank})"
        )
    seen = world.allgather((comm_id, device))
    if any(i != comm_id for i, _ in seen):
        raise NcclError(_ARG)  # the ranks would wait for each other forever on a GPU
    if len({d for _, d in seen}) != ndev:
        raise NcclError(_USAGE)  # "Duplicate GPU detected": two ranks on one GPU
    return world.Dup()


def _index(value, what: str) -> int:
    try:
        return int(value.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"an integer is required for {what}") from None


class NcclCommunicator:
    """``NcclCommunicator(int ndev, bytes commId, int rank, NcclConfig config=None)``."""

    def __init__(self, ndev, commId, rank, config=None) -> None:  # noqa: N803
        ndev, rank = _index(ndev, "ndev"), _index(rank, "rank")
        if not isinstance(commId, bytes):
            raise TypeError(f"Expected bytes, got {type(commId).__name__}")
        if len(commId) != 128:
            raise ValueError("commId must be 128 bytes")
        if config is not None and not isinstance(config, NcclConfig):
            raise TypeError("Argument 'config' has incorrect type (expected NcclConfig)")
        if not 0 <= rank < ndev:
            raise NcclError(_ARG)
        self._ndev, self._rank = ndev, rank
        self._device = _gpu.state["device"]
        self._comm = id(self)
        self._mpi = None if ndev == 1 else _mpi_world(ndev, rank, commId, self._device)
        self._sends: list = []  # MPI requests of sends made outside a group

    @staticmethod
    def initAll(devices):  # noqa: N802
        raise NotImplementedError("fakecupy: NcclCommunicator.initAll is not emulated")

    @property
    def comm(self) -> int:
        return self._comm

    def device_id(self) -> int:
        self._live()
        return self._device

    def rank_id(self) -> int:
        self._live()
        return self._rank

    def size(self) -> int:
        self._live()
        return self._ndev

    def destroy(self) -> None:
        self._comm = 0
        for req in self._sends:
            req.wait()
        self._sends = []
        if self._mpi is not None:
            self._mpi.Free()
            self._mpi = None

    def abort(self) -> None:
        self._comm = 0

    def check_async_error(self) -> None:
        self._live()

    def commSplit(self, color, key, config=None):  # noqa: N802
        self._live()
        color, key = _index(color, "color"), _index(key, "key")
        if color == -1:
            return None
        new = object.__new__(NcclCommunicator)
        new._ndev, new._rank, new._device, new._comm = 1, 0, self._device, 0
        new._comm = id(new)
        return new

    # -- collectives ---------------------------------------------------------------------------
    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # noqa: N802
        send, recv = self._buffers(sendbuf, recvbuf, count, datatype)
        op = self._op(op)
        self._launch(stream, [recv], lambda: recv.write(self._reduce(op, send.read())))

    def reduce(self, sendbuf, recvbuf, count, datatype, op, root, stream):
        self._peer(root)
        send, recv = self._buffers(sendbuf, recvbuf, count, datatype)
        op = self._op(op)

        def run():
            result = self._reduce(op, send.read())
            if self._rank == root:
                recv.write(result)

        self._launch(stream, [recv], run)

    def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
        self._peer(root)
        send, recv = self._buffers(sendbuff, recvbuff, count, datatype)
        self._launch(stream, [recv], lambda: recv.write(self._bcast(send, root)))

    def bcast(self, buff, count, datatype, root, stream):
        self._peer(root)
        buf, _ = self._buffers(buff, buff, count, datatype)
        self._launch(stream, [buf], lambda: buf.write(self._bcast(buf, root)))

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):  # noqa: N802
        send, recv = self._buffers(sendbuf, recvbuf, count, datatype, recv_times=self._ndev)
        self._launch(stream, [recv], lambda: recv.write(np.concatenate(self._all(send.read()))))

    def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op, stream):  # noqa: N802
        op = self._op(op)
        send, recv = self._buffers(sendbuf, recvbuf, recvcount, datatype, send_times=self._ndev)
        n, r = recv.count, self._rank
        self._launch(stream, [recv], lambda: recv.write(self._reduce(op, send.read())[r * n :][:n]))

    def send(self, sendbuf, count, datatype, peer, stream):
        self._p2p("send", sendbuf, count, datatype, peer, stream)

    def recv(self, recvbuf, count, datatype, peer, stream):
        self._p2p("recv", recvbuf, count, datatype, peer, stream)

    # -- checks and launches -------------------------------------------------------------------
    def _live(self) -> None:
        if not self._comm:
            raise NcclError(_ARG)  # a destroyed communicator (CuPy passes NULL to NCCL)

    def _dtype(self, datatype) -> np.dtype:
        datatype = _index(datatype, "datatype")
        if datatype == NCCL_BFLOAT16:
            from ember import dtypes

            return np.dtype(dtypes.bfloat16.np)
        if datatype not in _DTYPES:
            raise NcclError(_ARG)
        return _DTYPES[datatype]

    def _op(self, op) -> int:
        op = _index(op, "op")
        if op not in _REDUCE:
            raise NcclError(_ARG)
        return op

    # -- the data of other ranks (over MPI when the world has several processes) --------------
    def _all(self, values: np.ndarray) -> list:
        """Every rank's ``values``, in rank order."""
        return [values] if self._mpi is None else self._mpi.allgather(values)

    def _reduce(self, op: int, values: np.ndarray) -> np.ndarray:
        parts = self._all(values)
        out = parts[0]
        for p in parts[1:]:
            out = _REDUCE[op](out, p)
        if op == NCCL_AVG:
            out = out / len(parts)
        return out.astype(values.dtype)

    def _bcast(self, buf, root: int) -> np.ndarray:
        mine = buf.read() if self._rank == root else None
        return mine if self._mpi is None else self._mpi.bcast(mine, root=root)

    def _transfer(self, kind: str, buf, peer: int):
        """A send to or receive from another rank, as a launch."""
        if kind == "send":
            return lambda: self._sends.append(self._mpi.isend(buf.read(), dest=peer, tag=_TAG))
        return lambda: buf.write(self._mpi.recv(source=peer, tag=_TAG))

    def _peer(self, peer) -> None:
        if not 0 <= _index(peer, "peer") < self._ndev:
            raise NcclError(_ARG)

    def _buffers(self, sendbuf, recvbuf, count, datatype, send_times=1, recv_times=1):
        self._live()
        dtype = self._dtype(datatype)
        count = _index(count, "count")
        send = _Buffer(_index(sendbuf, "sendbuf"), count * send_times, dtype, self._device)
        recv = _Buffer(_index(recvbuf, "recvbuf"), count * recv_times, dtype, self._device)
        return send, recv

    def _p2p(self, kind, buf, count, datatype, peer, stream) -> None:
        self._live()
        self._peer(peer)
        b = _Buffer(_index(buf, "buf"), _index(count, "count"), self._dtype(datatype), self._device)
        stream, peer = _index(stream, "stream"), _index(peer, "peer")
        if _group["depth"]:
            _group["calls"].append((kind, self, b, stream, peer))
        elif peer == self._rank:
            raise RuntimeError(
                f"fakecupy: an NCCL {kind} to this rank outside groupStart/groupEnd hangs on a "
                "GPU (its matching call can never start)"
            )
        else:
            self._launch(stream, [b] if kind == "recv" else [], self._transfer(kind, b, peer))

    def _launch(self, stream, written: list, fn) -> None:
        """Run ``fn`` now on stream ``stream`` (a pointer); recorded into its capture."""
        from ._cuda import Stream

        s = Stream._by_ptr.get(_index(stream, "stream"))
        if s is None:
            raise NcclError(_CUDA)  # no such stream
        if s.device_id not in (-1, self._device):
            raise NcclError(_CUDA)
        cap = s._capture or s._joined
        for b in written:
            if cap is not None and b.owner is not None:
                _gpu.before_write(b.owner, cap)
        fn()
        s._launches += 1
        if cap is not None:
            owners = [b.owner for b in written]  # kept alive with the graph
            cap.thunks.append(lambda: (fn(), owners))


__all__ = [
    "NCCL_AVG",
    "NCCL_BFLOAT16",
    "NCCL_CHAR",
    "NCCL_DOUBLE",
    "NCCL_FLOAT",
    "NCCL_FLOAT16",
    "NCCL_FLOAT32",
    "NCCL_FLOAT64",
    "NCCL_HALF",
    "NCCL_INT",
    "NCCL_INT32",
    "NCCL_INT64",
    "NCCL_INT8",
    "NCCL_MAX",
    "NCCL_MIN",
    "NCCL_PROD",
    "NCCL_SUM",
    "NCCL_UINT32",
    "NCCL_UINT64",
    "NCCL_UINT8",
    "NcclCommunicator",
    "NcclConfig",
    "NcclError",
    "available",
    "check_status",
    "get_build_version",
    "get_unique_id",
    "get_version",
    "groupEnd",
    "groupStart",
]
