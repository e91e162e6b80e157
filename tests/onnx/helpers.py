"""Helpers for the ONNX export tests: run an exported model in onnxruntime, compare with eager.

Test modules call ``pytest.importorskip`` for onnx and onnxruntime before importing this."""

import io

import numpy as np
import onnx
import onnxruntime as ort

import ember

ort.set_default_logger_severity(3)


def export_bytes(fn, args, **kw):
    """Export to memory; returns (ModelProto, serialized bytes), after ``check_model``."""
    buf = io.BytesIO()
    proto = ember.onnx.export(fn, args, buf, **kw)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return proto, data


def session(data):
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def run(data, feeds: dict) -> list:
    """The model's outputs for ``feeds`` ({name: array or Tensor})."""
    arrays = {
        k: (v.numpy() if isinstance(v, ember.Tensor) else np.asarray(v)) for k, v in feeds.items()
    }
    return session(data).run(None, arrays)


def flat(out) -> list:
    """The tensors of a nested result, in order."""
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    return [t for o in out for t in flat(o)]


def assert_matches(got: list, want, atol=1e-5, rtol=1e-5):
    want = flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.numpy()
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, atol=atol, rtol=rtol)
        else:
            np.testing.assert_array_equal(g, w)


def check(fn, args, atol=1e-5, rtol=1e-5, **kw):
    """Export ``fn`` with ``args``, run it in onnxruntime, compare with eager (no_grad)."""
    args = args if isinstance(args, tuple) else (args,)
    names = kw.pop("input_names", None) or [f"in{i}" for i in range(len(args))]
    proto, data = export_bytes(fn, args, input_names=names, **kw)
    feeds = dict(zip(names, [a for a in args if isinstance(a, ember.Tensor)]))
    got = run(data, feeds)
    with ember.no_grad():
        want = fn(*args)
    assert_matches(got, want, atol, rtol)
    return proto, data
