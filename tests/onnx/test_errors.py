"""What can't be exported says why, naming the op and its node; bad arguments are named."""

import io
import sys
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402
from ember import static  # noqa: E402
from ember.onnx import ExportError  # noqa: E402
from ember.onnx.context import CONVERTERS, converts  # noqa: E402
from ember.ops.base import Op, Spec, apply  # noqa: E402
from tests.onnx.helpers import check  # noqa: E402


@dataclass(frozen=True)
class Twice(Op):
    """An op ember.onnx has no converter for."""

    def forward(self, xp, x):
        return x * 2

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)


def _export(fn, *args, **kw):
    return ember.onnx.export(fn, args, io.BytesIO(), **kw)


def test_unsupported_op_names_op_and_node():
    with pytest.raises(
        ExportError,
        match=r"no ONNX converter for op Twice \(.*Twice\) at node %2: f32\[2,3\] = Twice\(%1\)",
    ):
        _export(lambda x: apply(Twice(), x.exp()), ember.ones(2, 3))


def test_a_registered_converter_is_used():
    @converts(Twice)
    def _twice(ctx, node, x):
        return ctx.add("Add", [x, x])

    try:
        proto, _ = check(lambda x: apply(Twice(), x), (ember.randn(2, 3),))
        assert [n.op_type for n in proto.graph.node] == ["Add"]
    finally:
        CONVERTERS.pop(Twice)


def test_opset_too_old_for_an_op():
    with pytest.raises(
        ExportError, match=r"BitwiseAnd of integers needs opset 18 .*opset_version=18"
    ):
        _export(lambda x: x & 3, ember.tensor([1, 2, 3]))
    _export(lambda x: x & 3, ember.tensor([1, 2, 3]), opset_version=18)


def test_dynamic_size_an_op_needs():
    w = ember.ones(3, 2, 3, 3)
    with pytest.raises(ExportError, match=r"Conv2dGradInput at node .*height and width must be"):
        _export(
            lambda x: F.conv_transpose2d(x, w),
            ember.ones(1, 3, 4, 4),
            input_names=["x"],
            dynamic_axes={"x": [2]},
        )


def test_sizes_the_tracer_needs_are_trace_errors():
    with pytest.raises(static.TraceError, match="unknown"):
        _export(lambda x: ember.zeros(x.shape[0], 2) + x, ember.ones(3, 2), dynamic_axes={"x": [0]})


def test_writing_module_state_is_refused():
    buf = ember.zeros(3)

    def fn(x):
        buf.add_(x)  # an in-place write of a traced value into a real tensor
        return x * 2

    with pytest.raises(static.TraceError, match="in-place op would write a symbolic value"):
        _export(fn, ember.ones(3))
    assert np.all(buf.numpy() == 0)


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"opset_version": 12}, ValueError, r"opset_version must be between 13 and \d+ .*, got 12"),
        (
            {"dynamic_axes": {"y": [0]}},
            ValueError,
            r"dynamic_axes names 'y', which is not an input",
        ),
        (
            {"dynamic_axes": {"x": [5]}},
            ValueError,
            r"dynamic_axes\['x'\] names axis 5, but 'x' has 2",
        ),
        ({"dynamic_axes": {"x": 0}}, TypeError, r"dynamic_axes\['x'\] must be a list of axes or a"),
        ({"input_names": ["a", "b"]}, ValueError, r"2 input_names for 1 tensor inputs"),
        ({"output_names": ["a", "b"]}, ValueError, r"2 output_names for 1 outputs"),
        ({"output_names": ["x"]}, ValueError, r"input and output names must all differ"),
    ],
)
def test_bad_arguments(kw, error, message):
    with pytest.raises(error, match=message):
        _export(lambda x: x + 1, ember.ones(2, 3), **kw)


def test_bad_results_and_arguments():
    with pytest.raises(ExportError, match="the model returned str"):
        _export(lambda x: "hi", ember.ones(2))
    with pytest.raises(ValueError, match="example_args holds no tensor"):
        _export(lambda x: x, 3.0)
    with pytest.raises(TypeError, match="expected a Module or a function"):
        _export(42, ember.ones(2))


def test_graph_without_outputs_and_variables():
    g = static.Graph("g")
    with g.as_default():
        x = static.placeholder((2,), name="x")
        _ = x * 2
    with pytest.raises(ExportError, match="graph 'g' has no outputs"):
        _export(g, ember.ones(2))


def test_missing_onnx_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(ImportError, match=r"needs the onnx package: pip install onnx"):
        _export(lambda x: x, ember.ones(2))
