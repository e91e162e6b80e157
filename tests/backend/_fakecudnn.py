"""A stand-in for NVIDIA's cuDNN frontend module (``cudnn``) that runs convolutions and
scaled dot-product attention (forward with or without statistics, backward) with PyTorch on the
CPU, reading and writing the raw addresses ember passes to ``execute``.

It checks ember's use of the graph API (tensor dims and strides in elements, which operand is
which, output descriptions, plan filtering), not cuDNN itself. Where NVIDIA's frontend is
installed (``nvidia-cudnn-frontend``, the version the GPU machines run), every graph is also
built with the real ``cudnn.pygraph``, call for call (its methods, keywords, enum types and
construction checks; building needs no GPU, validating does, so that stays the GPU's). As
cuDNN, it has no float32 attention, and refuses attention operands whose last dimension is
strided or not a multiple of 8 (when the plans are checked); the backward checks that the
statistics it is given are the forward's (each query row's log-sum-exp of the scaled scores).
"""

from __future__ import annotations

import ctypes
import json
import types

import numpy as np
import torch

from ember.dtypes import bfloat16

try:  # the real frontend: its graph construction needs no GPU
    import cudnn as _real
except Exception:  # not installed, or no loadable library
    _real = None

data_type = types.SimpleNamespace(FLOAT="FLOAT", HALF="HALF", BFLOAT16="BFLOAT16", DOUBLE="DOUBLE")
heur_mode = types.SimpleNamespace(A="A", FALLBACK="FALLBACK")
numerical_note = types.SimpleNamespace(TENSOR_CORE="TENSOR_CORE", NONDETERMINISTIC="NONDET")
_NP = {"FLOAT": np.float32, "DOUBLE": np.float64, "HALF": np.float16, "BFLOAT16": bfloat16.np}


def _real_type(dt):
    """The real frontend's ``data_type`` member for ours (a name); None where it is not
    installed (nothing is mirrored then)."""
    return None if _real is None else getattr(_real.data_type, dt)


log: list = []  # (event, details) of every call that matters to the tests
fail_build = [False]


def create_handle():
    log.append(("create_handle", None))
    return types.SimpleNamespace(backend_handle=12345)


def set_stream(handle=None, stream=None):
    log.append(("set_stream", stream))


def backend_version():
    return 91000


class _Tensor:
    _next_uid = [1]

    def __init__(self, name, dim, stride, data_type) -> None:
        self.name, self.dim, self.stride, self.data_type = name, list(dim), list(stride), data_type
        self.output = False
        self.real = None  # the real frontend's tensor, where it is installed (``pygraph._mirror``)
        self.uid = self._next_uid[0]
        self._next_uid[0] += 1

    def get_uid(self) -> int:
        return self.uid

    def _also(self, method: str, value):
        """The same setter on the real frontend's tensor; returns self, as the setters do."""
        if self.real is not None:
            getattr(self.real, method)(_real_type(value) if method == "set_data_type" else value)
        return self

    def set_output(self, flag):
        self.output = flag
        return self._also("set_output", flag)

    def set_dim(self, dim):
        self.dim = list(dim)
        return self._also("set_dim", dim)

    def set_stride(self, stride):
        self.stride = list(stride)
        return self._also("set_stride", stride)

    def set_data_type(self, dt):
        self.data_type = dt
        return self._also("set_data_type", dt)


def _array(t: _Tensor, ptr: int) -> np.ndarray:
    dtype = np.dtype(_NP[t.data_type])
    span = sum((d - 1) * s for d, s in zip(t.dim, t.stride)) + 1
    buf = (ctypes.c_char * (span * dtype.itemsize)).from_address(ptr)
    return np.ndarray(t.dim, dtype, buf, strides=[s * dtype.itemsize for s in t.stride])


class _Lowered:
    """The backend graph under a frontend graph (1.32): its raw-pointer entry takes a
    ``void*[]`` of the caller-filled operands in ascending uid order."""

    def __init__(self, graph) -> None:
        self.graph = graph

    def _execute_with_raw_ptrs(self, address, n, workspace, handle, plan):
        if not isinstance(address, int) or not isinstance(workspace, int) or handle != 12345:
            raise TypeError("incompatible function arguments")
        uids = self.graph._variant_pack_uids()
        assert n == len(uids) and plan == -1, (n, uids, plan)
        pointers = list((ctypes.c_void_p * n).from_address(address))
        log.append(("direct", self.graph.op[0]))
        self.graph.execute(pointers, workspace, tensor_uids=uids, _direct=True)


class pygraph:  # noqa: N801 (the frontend's name)
    selected_engine = None  # the cuDNN backend serves the plan (no Python engine)
    _plans: list = []
    _plan_index = 0

    def __init__(
        self, handle=None, io_data_type=None, intermediate_data_type=None, compute_data_type=None
    ) -> None:
        self.io, self.compute = io_data_type, compute_data_type
        self.op = None
        self.notes: list = []
        self._lowered_graph = _Lowered(self)
        log.append(("graph", (io_data_type, compute_data_type)))
        types_ = dict(io_data_type=io_data_type, intermediate_data_type=intermediate_data_type,
                      compute_data_type=compute_data_type)  # fmt: skip
        self.real = None if _real is None else _real.pygraph(
            **{k: _real_type(v) for k, v in types_.items() if v is not None}
        )  # fmt: skip

    def _mirror(self, method: str, outs, **kwargs):
        """The same call on the real frontend's graph (its tensors for ours); its outputs become
        our outputs' ``real``."""
        if self.real is None:
            return
        args = {k: v.real if isinstance(v, _Tensor) else v for k, v in kwargs.items()}
        got = getattr(self.real, method)(**args)
        got = got if isinstance(got, list | tuple) else [got]
        for ours, theirs in zip(outs, got):
            if ours is not None:
                ours.real = theirs

    def _variant_pack_uids(self):
        kind = self.op[0]
        tensors = self.op[1] + self.op[2] if kind.startswith("sdpa") else self.op[1:4]
        return sorted(t.uid for t in tensors)

    def tensor(self, name, dim, stride, data_type):
        t = _Tensor(name, dim, stride, data_type)
        self._mirror("tensor", [t], name=name, dim=list(dim), stride=list(stride),
                     data_type=_real_type(data_type))  # fmt: skip
        return t

    def _op(self, kind, a, b, padding, stride, dilation):
        out = _Tensor(kind + "_out", [], [], self.io)
        self.op = (kind, a, b, out, list(padding), list(stride), list(dilation))
        return out

    def conv_fprop(self, image, weight, padding, stride, dilation):
        out = self._op("fprop", image, weight, padding, stride, dilation)
        self._mirror("conv_fprop", [out], image=image, weight=weight, padding=padding,
                     stride=stride, dilation=dilation)  # fmt: skip
        return out

    def conv_dgrad(self, loss, filter, padding, stride, dilation):
        out = self._op("dgrad", loss, filter, padding, stride, dilation)
        self._mirror("conv_dgrad", [out], loss=loss, filter=filter, padding=padding,
                     stride=stride, dilation=dilation)  # fmt: skip
        return out

    def conv_wgrad(self, image, loss, padding, stride, dilation):
        out = self._op("wgrad", image, loss, padding, stride, dilation)
        self._mirror("conv_wgrad", [out], image=image, loss=loss, padding=padding,
                     stride=stride, dilation=dilation)  # fmt: skip
        return out

    def sdpa(self, name, q, k, v, generate_stats, attn_scale, use_causal_mask):
        o = _Tensor(name + "_O", [], [], self.io)
        stats = _Tensor(name + "_Stats", [], [], self.io) if generate_stats else None
        outs = [o] if stats is None else [o, stats]
        self.op = ("sdpa", [q, k, v], outs, attn_scale, use_causal_mask)
        self._mirror("sdpa", [o, stats], name=name, q=q, k=k, v=v, generate_stats=generate_stats,
                     attn_scale=attn_scale, use_causal_mask=use_causal_mask)  # fmt: skip
        return o, stats

    def sdpa_backward(self, name, q, k, v, o, dO, stats, attn_scale, use_causal_mask):
        outs = [_Tensor(name + n, [], [], self.io) for n in ("_dQ", "_dK", "_dV")]
        self.op = ("sdpa_backward", [q, k, v, o, dO, stats], outs, attn_scale, use_causal_mask)
        self._mirror("sdpa_backward", outs, name=name, q=q, k=k, v=v, o=o, dO=dO, stats=stats,
                     attn_scale=attn_scale, use_causal_mask=use_causal_mask)  # fmt: skip
        return tuple(outs)

    def validate(self):
        assert self.op is not None, "no operation"
        if self.real is not None:  # the real graph as built (validating it needs a GPU)
            log.append(("real", json.loads(str(self.real))))
        outs = self.op[2] if self.op[0].startswith("sdpa") else [self.op[3]]
        assert all(t.output and t.dim for t in outs), "an output not marked or described"

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
        if self.op[0].startswith("sdpa"):
            for t in self.op[1][:3]:
                if t.data_type not in ("HALF", "BFLOAT16") or t.stride[-1] != 1 or t.dim[-1] % 8:
                    raise RuntimeError(f"cudnnGraphNotSupportedError: sdpa {t.data_type} {t.dim}")

    def build_plans(self):
        pass

    def get_workspace_size(self):
        return 64

    def execute(self, pack, workspace, handle=None, tensor_uids=None, _direct=False):
        """The frontend's two forms: ``pack`` a dict keyed by tensors, or (with
        ``tensor_uids``) a list of buffers in the uids' order, every operand bound once."""
        kind = self.op[0]
        assert isinstance(workspace, int)
        if kind.startswith("sdpa"):
            return self._attention(pack, tensor_uids)
        kind, a, b, out, padding, stride, dilation = self.op
        if tensor_uids is not None:
            if len(pack) != len(tensor_uids) or len(set(tensor_uids)) != len(tensor_uids):
                raise ValueError("tensor_uids must list distinct uids, one per buffer")
            by_uid = {t.uid: t for t in (a, b, out)}
            if set(tensor_uids) != set(by_uid):
                raise ValueError(f"the variant pack is missing a buffer for {set(by_uid)}")
            pack = {by_uid[u]: p for u, p in zip(tensor_uids, pack)}
            if not _direct:
                log.append(("ordered", kind))
        # 16-bit operands convolve in float32 here (PyTorch has no NumPy bfloat16)
        wide = np.float64 if a.data_type == "DOUBLE" else np.float32
        ta, tb = (torch.from_numpy(np.array(_array(t, pack[t]), wide)) for t in (a, b))
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

    def _attention(self, pack, tensor_uids):
        kind, ins, outs, scale, causal = self.op
        by_uid = {t.uid: t for t in ins + outs}
        if tensor_uids is None or sorted(tensor_uids) != sorted(by_uid):
            raise ValueError(f"the variant pack must bind {sorted(by_uid)} by uid")
        ptrs = {by_uid[u]: p for u, p in zip(tensor_uids, pack)}
        q, k, v = (
            torch.from_numpy(np.array(_array(t, ptrs[t]), np.float32)).requires_grad_()
            for t in ins[:3]
        )
        s = (q @ k.transpose(-2, -1)) * scale
        if causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        lse = torch.logsumexp(s, -1, keepdim=True)
        o = torch.softmax(s, -1) @ v
        if kind == "sdpa":
            _array(outs[0], ptrs[outs[0]])[...] = o.detach().numpy()
            if len(outs) == 2:
                _array(outs[1], ptrs[outs[1]])[...] = lse.detach().numpy()
        else:
            given_o, d_o, stats = (np.array(_array(t, ptrs[t]), np.float32) for t in ins[3:])
            np.testing.assert_allclose(stats, lse.detach().numpy(), rtol=1e-3, atol=1e-3)
            np.testing.assert_allclose(given_o, o.detach().numpy(), rtol=2e-2, atol=2e-2)
            grads = torch.autograd.grad(o, (q, k, v), torch.from_numpy(d_o))
            for t, gr in zip(outs, grads):
                _array(t, ptrs[t])[...] = gr.numpy()
        log.append(("execute", kind))
