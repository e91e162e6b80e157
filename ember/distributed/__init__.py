"""``ember.distributed``: data-parallel training across processes (PyTorch's
``torch.distributed``), on MPI through mpi4py and, for CuPy tensors, on NCCL through
``cupy.cuda.nccl`` (``init_process_group("nccl")``).

Start the processes with ``ember run -n N script.py`` (or any ``mpiexec``); each calls
``init_process_group()`` and then runs collectives on tensors. See docs/distributed.md.

>>> import ember.distributed as dist
>>> dist.is_available(), dist.is_initialized()  # doctest: +SKIP
(True, False)
>>> dist.ReduceOp.SUM.name
'SUM'
"""

from ._mpi import DistributedError
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .group import (
    NON_GROUP_MEMBER,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .p2p import irecv, isend, recv, send
from .reduce_op import ReduceOp
from .work import Work

Backend = type("Backend", (), {"MPI": "mpi", "GLOO": "gloo", "NCCL": "nccl"})

__all__ = [
    "Backend",
    "DistributedError",
    "GroupMember",
    "NON_GROUP_MEMBER",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
    "send_object_list",
]
