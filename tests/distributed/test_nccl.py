"""The nccl backend at world size 1: every collective against NumPy, async work ordered on the
streams with no host wait, a 1-rank NCCL DDP step equal to a plain one, the compiled DDP step
replayed as a CUDA graph, and the errors. Without a GPU these run on the strict fake CuPy's
``cupy.cuda.nccl`` (``tests/_fakecupy/_nccl.py``); ``pytest -m gpu`` runs them on a GPU."""

import importlib
import sys
import warnings

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed import _mpi
from ember.nn.parallel import DistributedDataParallel as DDP
from tests.conftest import CUDA, FAKE_CUDA, NO_CUDA_REASON
from tests.distributed._ddp_case import Net, train

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not (CUDA or FAKE_CUDA), reason=NO_CUDA_REASON),
]
group = importlib.import_module("ember.distributed.group")  # the module (dist.group: WORLD)
LAUNCHER_VARS = group._SIZE_VARS + ("RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")


@pytest.fixture
def gpu(request, monkeypatch):
    """The fake CuPy (without a GPU), as a world of one started with no MPI launcher."""
    fake = request.getfixturevalue("fake_cuda") if FAKE_CUDA else None
    for var in LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)  # as in a fresh process
    yield fake
    dist.destroy_process_group()


@pytest.fixture
def nccl(gpu):
    dist.init_process_group("nccl")
    return gpu


def _cuda(a) -> ember.Tensor:
    return ember.tensor(a).to("cuda")


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8"]


def _values(dtype: str, shape=(2, 3)) -> np.ndarray:
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 2
    if dtype == "uint8":
        a = np.abs(a)
    return a.astype(ember.dtypes.bfloat16.np if dtype == "bfloat16" else dtype)


def test_init_uses_nccl_on_the_local_rank_gpu_without_mpi(nccl):
    pg = group.group.WORLD
    assert dist.get_backend() == "nccl" and dist.is_nccl_available()
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    assert pg.nccl.device == 0 and pg._comm is None  # MPI was never started
    assert "mpi4py.MPI" not in sys.modules or _mpi.available()


def test_local_rank_picks_the_gpu(gpu, monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "3")  # 3 % 2 GPUs on the fake
    dist.init_process_group("nccl")
    n = ember.cuda.device_count()
    assert group.group.WORLD.nccl.device == 3 % n == ember.cuda.current_device()


@pytest.mark.parametrize("dtype", DTYPES)
def test_collectives_at_world_size_one_against_numpy(nccl, dtype):
    a = _values(dtype)
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
        if op == "AVG" and dtype not in ("float32", "float16", "bfloat16", "float64"):
            continue
        t = _cuda(a)
        assert dist.all_reduce(t, op=getattr(dist.ReduceOp, op)) is None
        np.testing.assert_array_equal(_host(t), a, err_msg=op)
    t = _cuda(a)
    dist.broadcast(t, src=0)
    np.testing.assert_array_equal(_host(t), a)
    outs = [_cuda(np.zeros_like(a))]
    dist.all_gather(outs, _cuda(a))
    np.testing.assert_array_equal(_host(outs[0]), a)
    big = _cuda(np.zeros((1, *a.shape), a.dtype))
    dist.all_gather_into_tensor(big, _cuda(a))
    np.testing.assert_array_equal(_host(big)[0], a)
    out = _cuda(np.zeros_like(a))
    dist.reduce_scatter(out, [_cuda(a)])
    np.testing.assert_array_equal(_host(out), a)
    out = _cuda(np.zeros(a.size, a.dtype))
    dist.reduce_scatter_tensor(out, _cuda(a.reshape(-1)))
    np.testing.assert_array_equal(_host(out), a.reshape(-1))
    t = _cuda(a)
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    np.testing.assert_array_equal(_host(t), a)
    got = [_cuda(np.zeros_like(a))]
    dist.gather(_cuda(a), got, dst=0)
    np.testing.assert_array_equal(_host(got[0]), a)
    t = _cuda(np.zeros_like(a))
    dist.scatter(t, [_cuda(a)], src=0)
    np.testing.assert_array_equal(_host(t), a)
    dist.barrier()


def test_bool_and_non_contiguous(nccl):
    flags = _cuda(np.array([True, False]))
    dist.all_reduce(flags, op=dist.ReduceOp.SUM)  # logical or, as PyTorch
    assert _host(flags).tolist() == [True, False]
    base = _cuda(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = base.t()  # non-contiguous: copied to a buffer and back
    dist.all_reduce(view, op=dist.ReduceOp.SUM)
    np.testing.assert_array_equal(_host(base), np.arange(12, dtype=np.float32).reshape(3, 4))


def test_async_work_orders_the_stream_without_a_host_wait(nccl):
    """``wait()`` only makes the current stream wait (it works inside a stream capture, where a
    host wait raises), and the outputs hold the result after it, as with PyTorch's NCCL."""
    if nccl is None:
        pytest.skip("the fake's capture checks; a GPU runs the DDP graph test instead")
    cp = nccl
    t = _cuda(np.ones(4, np.float32))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        t._data *= 3
        work = dist.all_reduce(t, op=dist.ReduceOp.SUM, async_op=True)
        assert isinstance(work, dist.Work)
        work.wait()
        t._data += 1
        graph = stream.end_capture()
    np.testing.assert_array_equal(_host(t), 1)  # a capture runs nothing
    graph.launch()
    np.testing.assert_array_equal(_host(t), 4)


def test_a_collective_left_unwaited_in_a_capture_is_refused(nccl):
    if nccl is None:
        pytest.skip("checks the fake's model of CUDA's capture rules")
    cp = nccl
    t = _cuda(np.ones(4, np.float32))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        dist.all_reduce(t, async_op=True)  # never waited for: its stream is not joined back
        with pytest.raises(Exception, match="cudaErrorStreamCaptureUnjoined"):
            stream.end_capture()


def _pair():
    ember.manual_seed(7)
    plain = Net().to("cuda")
    ember.manual_seed(7)
    wrapped = Net().to("cuda")
    return plain, wrapped


def test_one_rank_nccl_ddp_step_equals_a_plain_step(nccl):
    plain, wrapped = _pair()
    ddp = DDP(wrapped, bucket_cap_mb=0.0001)  # several buckets, each through NCCL
    assert len(ddp.reducer.buckets) > 2
    for a, b in zip(train(plain)[0], train(ddp)[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_find_unused_parameters_flags_go_through_nccl(nccl):
    class Half(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(2, 2), nn.Linear(2, 2)

        def forward(self, x):
            return self.used(x)

    model = Half().to("cuda")
    ddp = DDP(model, find_unused_parameters=True)
    ddp(_cuda(np.ones((3, 2), np.float32))).sum().backward()
    np.testing.assert_array_equal(_host(model.used.bias.grad), [3, 3])
    assert model.unused.weight.grad is None


def test_compiled_nccl_ddp_step_replays_in_a_cuda_graph(nccl, monkeypatch):
    """Warm-up, one capture, then three replays, each running every bucket's all-reduce (the
    fake counts the NCCL launches a replay makes); no fallback warning."""
    graphs, runs = [], []
    if nccl is not None:
        from tests._fakecupy import _nccl as fake_nccl

        end_capture, launch = nccl.cuda.Stream.end_capture, fake_nccl.NcclCommunicator._launch
        replay = nccl.cuda.Graph.launch
        replaying = []

        def keep(self):
            graphs.append(end_capture(self))
            return graphs[-1]

        def counted(self, stream, written, fn):
            return launch(self, stream, written, lambda: (runs.append(bool(replaying)), fn()))

        def replayed(self, stream=None):
            replaying.append(1)
            try:
                return replay(self, stream)
            finally:
                replaying.clear()

        monkeypatch.setattr(nccl.cuda.Stream, "end_capture", keep)
        monkeypatch.setattr(nccl.cuda.Graph, "launch", replayed)
        monkeypatch.setattr(fake_nccl.NcclCommunicator, "_launch", counted)
    plain, wrapped = _pair()
    ddp = DDP(wrapped, bucket_cap_mb=0.0001)
    buckets = len(ddp.reducer.buckets)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "runs without a CUDA graph"
        with_graph, compiled = train(ddp, compiled=True)
    for a, b in zip(train(plain)[0], with_graph):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    runner = compiled._latest.runner
    assert runner.disabled is None and runner.captures == 1 and runner.replays == 3
    if nccl is not None:
        assert len(graphs) == 1
        assert sum(runs) == 3 * buckets  # the capturing call and the two after it replay it


def test_errors_name_the_collective_and_the_devices(nccl, monkeypatch):
    cpu = ember.ones(2)
    monkeypatch.setattr(_mpi, "available", lambda: False)
    with pytest.raises(
        dist.DistributedError, match=r"all_reduce: the tensor is on the cpu.*mpi4py"
    ):
        dist.all_reduce(cpu)
    with pytest.raises(
        dist.DistributedError, match=r"all_gather: .*\(cuda:0 float32, cpu float32\)"
    ):
        dist.all_gather_into_tensor(_cuda(np.zeros(2, np.float32)), cpu)
    if ember.cuda.device_count() > 1:
        other = ember.ones(2, device="cuda:1")
        with pytest.raises(dist.DistributedError, match=r"broadcast: .* on cuda:1.* uses cuda:0"):
            dist.broadcast(other, src=0)
    with pytest.raises(ember.DTypeError, match="all_reduce: ReduceOp.AVG is not defined for int64"):
        dist.all_reduce(_cuda(np.ones(2, np.int64)), op=dist.ReduceOp.AVG)
    with pytest.raises(ember.DTypeError, match="all_reduce: NCCL has no int16 type"):
        dist.all_reduce(_cuda(np.ones(2, np.int16)))
    with pytest.raises(dist.DistributedError, match="NCCL receives only from a given rank"):
        dist.irecv(_cuda(np.ones(2, np.float32)))
    with pytest.raises(dist.DistributedError, match="send to rank 0 .* itself"):
        dist.send(_cuda(np.ones(2, np.float32)), dst=0)


def test_unknown_backend_and_nccl_without_cupy(gpu, monkeypatch):
    with pytest.raises(dist.DistributedError, match="unknown backend 'ucc'"):
        dist.init_process_group("ucc")
    from ember.distributed import _nccl

    monkeypatch.setattr(_nccl, "module", lambda: None)
    with pytest.raises(dist.DistributedError, match="'nccl' backend needs CuPy with its NCCL"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized() and not dist.is_nccl_available()


def _real_nccl():
    try:
        real = importlib.import_module("cupy.cuda.nccl")  # loads NCCL's library first
    except Exception:  # noqa: BLE001 - no CuPy, or no NCCL library
        pytest.skip("CuPy's NCCL bindings do not import here (pip install nvidia-nccl-cu12)")
    if not real.available:
        pytest.skip("CuPy's NCCL bindings say NCCL is not available")
    return real


def test_fake_nccl_has_cupys_names_constants_and_signatures():
    """The fake ``cupy.cuda.nccl`` against the real one (where it imports without a GPU)."""
    from tests._fakecupy import _nccl as fake

    real = _real_nccl()
    public = {n for n in dir(real) if not n.startswith("_") and n != "annotations"}
    assert public == set(fake.__all__)
    for name in public:
        if name.startswith("NCCL_"):
            assert getattr(fake, name) == getattr(real, name), name
    methods = {n for n in dir(real.NcclCommunicator) if not n.startswith("_")}
    assert methods == {n for n in dir(fake.NcclCommunicator) if not n.startswith("_")}
    for name in methods - {"comm"}:
        doc = getattr(real.NcclCommunicator, name).__doc__.splitlines()[0]
        params = [p.split()[-1].split("=")[0] for p in doc[doc.index("(") + 1 : -1].split(",")]
        params = [p for p in params if p and p != "self"]
        theirs = getattr(fake.NcclCommunicator, name).__code__
        mine = list(theirs.co_varnames[: theirs.co_argcount])
        assert [p for p in mine if p != "self"] == params, name
    assert str(fake.NcclError(4)) == str(real.NcclError(4))
    assert isinstance(real.get_unique_id(), bytes)
