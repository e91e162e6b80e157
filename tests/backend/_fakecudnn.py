"""A stand-in for NVIDIA's cuDNN frontend module (``cudnn``) that runs convolutions with
PyTorch on the CPU, reading and writing the raw addresses ember passes to ``execute``.

It checks ember's use of the graph API (tensor dims and strides in elements, which operand is
which, output descriptions, plan filtering), not cuDNN itself.
"""

from __future__ import annotations

import ctypes
import types

import numpy as np
import torch

data_type = types.SimpleNamespace(FLOAT="FLOAT", HALF="HALF", BFLOAT16="BFLOAT16", DOUBLE="DOUBLE")
heur_mode = types.SimpleNamespace(A="A", FALLBACK="FALLBACK")
numerical_note = types.SimpleNamespace(TENSOR_CORE="TENSOR_CORE", NONDETERMINISTIC="NONDET")
_NP = {"FLOAT": np.float32, "DOUBLE": np.float64}

log: list = []  # (event, details) of every call that matters to the tests
fail_build = [False]


def create_handle():
    log.append(("create_handle", None))
    return object()


def set_stream(handle=None, stream=None):
    log.append(("set_stream", stream))


def backend_version():
    return 91000


class _Tensor:
    _next_uid = [1]

    def __init__(self, name, dim, stride, data_type) -> None:
        self.name, self.dim, self.stride, self.data_type = name, list(dim), list(stride), data_type
        self.output = False
        self.uid = self._next_uid[0]
        self._next_uid[0] += 1

    def get_uid(self) -> int:
        return self.uid

    def set_output(self, flag):
        self.output = flag
        return self

    def set_dim(self, dim):
        self.dim = list(dim)
        return self

    def set_stride(self, stride):
        self.stride = list(stride)
        return self

    def set_data_type(self, dt):
        self.data_type = dt
        return self


def _array(t: _Tensor, ptr: int) -> np.ndarray:
    dtype = np.dtype(_NP[t.data_type])
    span = sum((d - 1) * s for d, s in zip(t.dim, t.stride)) + 1
    buf = (ctypes.c_char * (span * dtype.itemsize)).from_address(ptr)
    return np.ndarray(t.dim, dtype, buf, strides=[s * dtype.itemsize for s in t.stride])


class pygraph:  # noqa: N801 (the frontend's name)
    def __init__(
        self, handle=None, io_data_type=None, intermediate_data_type=None, compute_data_type=None
    ) -> None:
        self.io, self.compute = io_data_type, compute_data_type
        self.op = None
        self.notes: list = []
        log.append(("graph", (io_data_type, compute_data_type)))

    def tensor(self, name, dim, stride, data_type):
        return _Tensor(name, dim, stride, data_type)

    def _op(self, kind, a, b, padding, stride, dilation):
        out = _Tensor(kind + "_out", [], [], self.io)
        self.op = (kind, a, b, out, list(padding), list(stride), list(dilation))
        return out

    def conv_fprop(self, image, weight, padding, stride, dilation):
        return self._op("fprop", image, weight, padding, stride, dilation)

    def conv_dgrad(self, loss, filter, padding, stride, dilation):
        return self._op("dgrad", loss, filter, padding, stride, dilation)

    def conv_wgrad(self, image, loss, padding, stride, dilation):
        return self._op("wgrad", image, loss, padding, stride, dilation)

    def validate(self):
        assert self.op is not None and self.op[3].output, "no output marked"

    def build_operation_graph(self):
        pass

    def create_execution_plans(self, modes):
        self.modes = list(modes)

    def deselect_numeric_notes(self, notes):
        self.notes += list(notes)
        log.append(("deselect", tuple(notes)))

    def check_support(self):
        if fail_build[0]:
            raise RuntimeError("cudnnGraphNotSupportedError: no engine")

    def build_plans(self):
        pass

    def get_workspace_size(self):
        return 64

    def execute(self, pack, workspace, handle=None, tensor_uids=None):
        """The frontend's two forms: ``pack`` a dict keyed by tensors, or (with
        ``tensor_uids``) a list of buffers in the uids' order, every operand bound once."""
        kind, a, b, out, padding, stride, dilation = self.op
        assert isinstance(workspace, int)
        if tensor_uids is not None:
            if len(pack) != len(tensor_uids) or len(set(tensor_uids)) != len(tensor_uids):
                raise ValueError("tensor_uids must list distinct uids, one per buffer")
            by_uid = {t.uid: t for t in (a, b, out)}
            if set(tensor_uids) != set(by_uid):
                raise ValueError(f"the variant pack is missing a buffer for {set(by_uid)}")
            pack = {by_uid[u]: p for u, p in zip(tensor_uids, pack)}
            log.append(("ordered", kind))
        ta, tb = (torch.from_numpy(np.array(_array(t, pack[t]))) for t in (a, b))
        geo = dict(stride=stride, padding=padding, dilation=dilation)
        if kind == "fprop":
            groups = a.dim[1] // b.dim[1]
            y = torch.nn.functional.conv2d(ta, tb, groups=groups, **geo)
        elif kind == "dgrad":
            groups = out.dim[1] // b.dim[1]
            y = torch.nn.grad.conv2d_input(out.dim, tb, ta, groups=groups, **geo)
        else:
            groups = a.dim[1] // out.dim[1]
            y = torch.nn.grad.conv2d_weight(ta, out.dim, tb, groups=groups, **geo)
        assert list(y.shape) == out.dim, (kind, list(y.shape), out.dim)
        _array(out, pack[out])[...] = y.numpy()
        log.append(("execute", kind))
