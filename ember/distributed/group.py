"""Process groups: ``init_process_group``, ``new_group``, ranks and sizes.

A ``ProcessGroup`` wraps an MPI communicator (its own duplicate, so ember's traffic never
meets the user's own mpi4py calls) and, on the nccl backend, an NCCL communicator
(``_nccl.Communicator``) for CuPy tensors, with the group's timeout and a sequence number that every
collective increments, so a timeout or a mismatch names "all_reduce #12".

``EMBER_DISTRIBUTED_DEBUG=1`` (read once, at ``init_process_group``) makes every collective
first exchange its name, shapes, dtypes, op and root with the other ranks and raise, naming
both sides, when they differ, instead of returning garbage or hanging.

>>> import ember.distributed as dist
>>> dist.is_initialized()
False
"""

from __future__ import annotations

import datetime
import os
import sys

from . import _mpi, _nccl
from ._mpi import DistributedError

DEFAULT_TIMEOUT_S = 1800.0  # PyTorch's default for gloo / MPI: 30 minutes


class ProcessGroup:
    """A set of ranks that run collectives together (PyTorch's ``ProcessGroup``).

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size;
    ``ranks`` lists the members' global ranks.
    """

    def __init__(
        self,
        comm,
        ranks,
        timeout: float,
        name: str,
        debug: bool,
        backend: str = "mpi",
        nccl=None,
        make_comm=None,
    ) -> None:
        # ``comm`` is None only for a one-rank nccl group started without any MPI launcher:
        # ``make_comm`` starts MPI (singleton) the first time a cpu tensor or object needs it
        self._comm = comm
        self._make_comm = make_comm
        self._rank, self._size = (0, 1) if comm is None else (comm.rank, comm.size)
        self.ranks = tuple(ranks)
        self.timeout = timeout
        self.name = name
        self.debug = debug
        self.backend = backend
        self.nccl = nccl  # _nccl.Communicator: cuda tensors' transport on the nccl backend
        self._seq = 0
        # the communication thread's own communicator (made here, where every rank is: a
        # Dup at the thread's first use would wait without a timeout for a late rank)
        self.async_comm = comm.Dup() if comm is not None and comm.size > 1 else None
        self._comm_thread = None  # _thread.CommThread: async all-reduces (started on first use)

    @property
    def comm(self):
        """The group's MPI communicator (cpu tensors, objects; every tensor on "mpi")."""
        if self._comm is None:
            if self._make_comm is None:
                raise DistributedError(f"{self.name}: this group has no MPI communicator")
            self._comm = self._make_comm()
        return self._comm

    def has_mpi(self) -> bool:
        """Whether cpu tensors and objects can travel (over MPI) in this group."""
        return self._comm is not None or _mpi.available()

    def free(self) -> None:
        """Release the communicators (the communication thread ends after its queued jobs)."""
        ended = self._comm_thread is None or self._comm_thread.close(min(self.timeout, 10.0))
        self._comm_thread = None
        if self.async_comm is not None and ended:
            self.async_comm.Free()
        if self._comm is not None:
            self._comm.Free()
        if self.nccl is not None:
            self.nccl.free()
            self.nccl = None

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.name} ranks={list(self.ranks)} backend={self.backend}>"

    def group_rank(self, global_rank: int, role: str, collective: str) -> int:
        """The rank in this group of the process with ``global_rank`` (``src=`` / ``dst=``)."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise DistributedError(
                f"{collective}: {role}={global_rank} is not a member of {self.name} (global "
                f"ranks {list(self.ranks)})"
            ) from None

    def begin(self, collective: str, signature: tuple, detail: str) -> str:
        """Count one collective and return its description (for errors); in debug mode, check
        that every rank calls the same collective with matching ``signature``."""
        self._seq += 1
        what = f"{collective} #{self._seq} on {self.name} (rank {self.rank()} of {self.size()}"
        what += f"; {detail})" if detail else ")"
        if self.debug:
            self._check(collective, signature, what)
        return what

    def _check(self, collective: str, signature: tuple, what: str) -> None:
        mine = f"{collective} #{self._seq} with {', '.join(map(str, signature))}"
        theirs = _mpi.allgather_text(self.comm, mine, what, self.timeout)
        for r, other in enumerate(theirs):
            if other != mine:
                raise DistributedError(
                    f"{what}: ranks disagree: rank {self.rank()} calls {mine}, rank {r} calls "
                    f"{other} (EMBER_DISTRIBUTED_DEBUG)"
                )


class _NonMember:
    """What ``new_group`` returns on ranks outside the group (PyTorch's NON_GROUP_MEMBER)."""

    name = "a group this rank is not in"

    def __repr__(self) -> str:
        return "<ProcessGroup: not a member>"


NON_GROUP_MEMBER = _NonMember()


class group:  # noqa: N801  (PyTorch spells it dist.group.WORLD)
    """``dist.group.WORLD``: the default group (None before ``init_process_group``)."""

    WORLD: ProcessGroup | None = None


GroupMember = group


def _seconds(timeout) -> float:
    return DEFAULT_TIMEOUT_S if timeout is None else _mpi.seconds(timeout)


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | float | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the job's default process group (the processes ``ember run -n N`` or any MPI
    launcher started).

    ``backend``: ``"mpi"`` (the default; also takes CuPy tensors, staged through the host),
    ``"gloo"`` (means MPI here) or ``"nccl"``: CuPy tensors then go through NCCL on this rank's
    GPU (``LOCAL_RANK % device_count``, or ``device_id``, made the current one), launched on
    the GPU's streams without waiting for the host, and cpu tensors and ``*_object`` collectives
    over MPI (PyTorch's default ``"cpu:gloo,cuda:nccl"``). Rank 0's NCCL id reaches the others
    over MPI; one process started without any launcher is a world of one and needs no MPI.
    Ranks come from MPI; ``RANK`` / ``WORLD_SIZE`` (``env://``) and ``rank=`` /
    ``world_size=``, when given, must agree with it. ``timeout`` (a timedelta or seconds,
    default 30 minutes) bounds every MPI collective: a peer that does not join in time is an
    error naming the collective.

    >>> import ember.distributed as dist
    >>> dist.init_process_group("gloo")  # doctest: +SKIP
    >>> dist.get_rank(), dist.get_world_size()  # doctest: +SKIP
    (0, 1)
    """
    if group.WORLD is not None:
        raise DistributedError("init_process_group: the default process group is already set up")
    name = (backend or "mpi").lower()
    if name not in ("mpi", "gloo", "nccl"):
        raise DistributedError(
            f"init_process_group: unknown backend {backend!r}; ember has 'mpi', 'gloo' (= mpi) "
            "and 'nccl'"
        )
    if init_method not in (None, "env://") or store is not None:
        raise DistributedError(
            f"init_process_group: init_method={init_method!r}: ember's ranks find each other "
            "through MPI; start them with 'ember run -n N script.py' (or any mpiexec) and leave "
            "init_method unset or 'env://'"
        )
    debug = os.environ.get("EMBER_DISTRIBUTED_DEBUG", "0") not in ("", "0")
    limit = _seconds(timeout)
    if name == "nccl" and _standalone(world_size):
        _agree("RANK", 0, rank, os.environ.get("RANK"))
        nccl = _nccl.Communicator.create(0, 1, _nccl_device(device_id, 0), lambda uid: uid)
        group.WORLD = ProcessGroup(
            None, [0], limit, "WORLD", debug, "nccl", nccl, make_comm=_singleton_world
        )
        return
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    _agree("RANK", world.rank, rank, os.environ.get("RANK"))
    _agree("WORLD_SIZE", world.size, world_size, os.environ.get("WORLD_SIZE"))
    if world.size > 1:
        _abort_on_uncaught_exception()
    nccl = None
    if name == "nccl":

        def share(uid):
            with _mpi.blocking("init_process_group (the NCCL id from rank 0)", limit):
                return world.bcast(uid, root=0)

        # NCCL's setup waits for every rank without a timeout: a rank failing here must end
        # the job (the hook aborts while _starting is set: the error leaves it set)
        _starting[0] = world.size > 1
        device = _nccl_device(device_id, world.rank)
        nccl = _nccl.Communicator.create(world.rank, world.size, device, share)
        _starting[0] = False
    backend_name = "nccl" if name == "nccl" else "mpi"
    group.WORLD = ProcessGroup(
        world.Dup(), range(world.size), limit, "WORLD", debug, backend_name, nccl
    )


# what launchers set for the world's size (Open MPI, MPICH / Hydra, Slurm) besides WORLD_SIZE
_SIZE_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")


def _standalone(world_size: int) -> bool:
    """Whether this process is a world of one started without an MPI launcher (and MPI is not
    up yet): the nccl backend then starts no MPI until a cpu tensor or an object needs it."""
    if "mpi4py.MPI" in sys.modules or world_size not in (-1, 1):
        return False
    return all(os.environ.get(v, "1").strip() in ("", "1") for v in _SIZE_VARS)


def _singleton_world():
    """The one-rank world's MPI communicator, started on first use (MPI's singleton mode)."""
    world = _mpi.mpi().COMM_WORLD
    if world.size != 1:
        raise DistributedError(
            f"the nccl process group was made for a world of one, but MPI sees {world.size} "
            "processes"
        )
    return world.Dup()


def _nccl_device(device_id, rank: int) -> int:
    """This rank's GPU: ``device_id`` when given, else ``LOCAL_RANK % device_count`` (made the
    current GPU, as ``torch.cuda.set_device(local_rank)`` would)."""
    from ..backend import cuda as _cuda
    from ._rank import _VARS

    count = _cuda.device_count()
    if count == 0:
        _nccl._need()
    index = getattr(device_id, "index", device_id)
    if isinstance(index, str):
        index = int(index.rpartition(":")[2]) if ":" in index else None
    if index is None:
        local = os.environ.get("LOCAL_RANK")
        for var in _VARS["LOCAL_RANK"]:
            local = local if local is not None else os.environ.get(var)
        index = (rank if local is None else int(local)) % count
    _cuda.set_device(int(index))
    return int(index)


def _agree(what: str, actual: int, arg: int, env: str | None) -> None:
    for source, value in (("argument", arg), ("environment variable", env)):
        if value is None or int(value) == -1:
            continue
        if int(value) != actual:
            raise DistributedError(
                f"init_process_group: {what}={value} ({source}) but MPI started this process "
                f"as {what.lower()} {actual}; launch with 'ember run -n N' (or mpiexec) and let "
                "MPI decide"
            )


_starting = [False]  # inside the nccl backend's setup at more than one rank


def _abort_on_uncaught_exception() -> None:
    """An uncaught exception prints its traceback, then ends every rank (MPI_Abort): left to
    itself, the failing rank would wait in MPI_Finalize and the others in their collective."""
    previous = sys.excepthook
    if getattr(previous, "_ember_abort", False):
        return

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        sys.stderr.flush()
        if group.WORLD is not None or _starting[0]:
            _mpi.mpi().COMM_WORLD.Abort(1)

    hook._ember_abort = True
    sys.excepthook = hook


def destroy_process_group(group_: ProcessGroup | None = None) -> None:
    """Leave ``group_`` (default: every group; ``init_process_group`` may then run again).

    >>> import ember.distributed as dist
    >>> dist.destroy_process_group()  # doctest: +SKIP
    """
    if group_ is None:
        pg = group.WORLD
        group.WORLD = None
        if pg is not None:
            pg.free()
        return
    if isinstance(group_, ProcessGroup) and group_ is not group.WORLD:
        group_.free()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not).

    >>> import ember.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return group.WORLD is not None


def is_available() -> bool:
    """Whether ember.distributed can run here (mpi4py and an MPI library are installed)."""
    return _mpi.available()


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    """'gloo' means MPI in ember."""
    return _mpi.available()


def is_nccl_available() -> bool:
    """Whether the "nccl" backend can run here (CuPy with ``cupy.cuda.nccl.available``, and a
    GPU).

    >>> import ember.distributed as dist
    >>> dist.is_nccl_available() in (True, False)
    True
    """
    return _nccl.available()


def is_torchelastic_launched() -> bool:
    return False


def resolve(group_: ProcessGroup | None, collective: str) -> ProcessGroup:
    """The group a collective runs on: ``group_`` or the default one, with clear errors."""
    if group_ is None:
        group_ = group.WORLD
        if group_ is None:
            raise DistributedError(
                f"{collective}: the default process group has not been initialized; call "
                "ember.distributed.init_process_group() first"
            )
        return group_
    if group_ is NON_GROUP_MEMBER:
        raise DistributedError(f"{collective}: this rank is not a member of the group")
    if not isinstance(group_, ProcessGroup):
        raise DistributedError(
            f"{collective}: group= takes a ProcessGroup from new_group(), not "
            f"{type(group_).__name__}"
        )
    return group_


def new_group(
    ranks: list[int] | None = None,
    timeout: datetime.timedelta | float | None = None,
    backend: str | None = None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id=None,
):
    """A new group of the given global ``ranks`` (default: all). Every rank of the default
    group must call it, members or not; non-members get ``GroupMember.NON_GROUP_MEMBER``.

    >>> import ember.distributed as dist
    >>> evens = dist.new_group([0, 2])  # doctest: +SKIP
    """
    world = resolve(None, "new_group")
    members = sorted(set(range(world.size()) if ranks is None else (int(r) for r in ranks)))
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad:
        raise DistributedError(
            f"new_group: ranks {bad} are outside the world of {world.size()} processes"
        )
    mine = world.rank() in members
    if world._comm is None:  # a world of one without MPI: the group needs none either
        comm = None
    else:
        MPI = _mpi.mpi()
        comm = world.comm.Split(0 if mine else MPI.UNDEFINED, world.rank())
    nccl = world.nccl.split(mine, world.rank()) if world.nccl is not None else None
    if not mine:
        return NON_GROUP_MEMBER
    limit = world.timeout if timeout is None else _seconds(timeout)
    name = group_desc or f"group{members}"
    make = world._make_comm if comm is None else None
    return ProcessGroup(comm, members, limit, name, world.debug, world.backend, nccl, make)


def get_rank(group: ProcessGroup | None = None) -> int:  # noqa: F811
    """This process's rank in ``group`` (default: the world); -1 outside the group.

    >>> import ember.distributed as dist
    >>> dist.get_rank()  # doctest: +SKIP
    0
    """
    if group is NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_rank").rank()


def get_world_size(group: ProcessGroup | None = None) -> int:  # noqa: F811
    """The number of processes in ``group`` (default: the world); -1 outside the group.

    >>> import ember.distributed as dist
    >>> dist.get_world_size()  # doctest: +SKIP
    2
    """
    if group is NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_world_size").size()


def get_backend(group: ProcessGroup | None = None) -> str:  # noqa: F811
    """The group's backend: ``"nccl"`` or ``"mpi"`` (what ``"gloo"`` means here).

    >>> import ember.distributed as dist
    >>> dist.get_backend()  # doctest: +SKIP
    'nccl'
    """
    return resolve(group, "get_backend").backend


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:  # noqa: F811
    """The global rank of ``group``'s member ``group_rank``."""
    return resolve(group, "get_global_rank").ranks[group_rank]


def get_process_group_ranks(group: ProcessGroup) -> list[int]:  # noqa: F811
    """The global ranks of ``group``'s members."""
    return list(resolve(group, "get_process_group_ranks").ranks)
