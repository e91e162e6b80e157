"""Whole models exported to ONNX and run in onnxruntime give what eager ember gives."""

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402
from ember import static  # noqa: E402
from tests.onnx.helpers import assert_matches, check, export_bytes, run  # noqa: E402


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        logits = self.fc(x.flatten(1))
        return F.softmax(logits, dim=1), F.log_softmax(logits, dim=1)


def _randomize_bn(model):
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            m.running_mean.copy_(ember.randn(c) * 0.5)
            m.running_var.copy_(ember.rand(c) + 0.5)
            m.weight.data.copy_(ember.rand(c) + 0.5)
            m.bias.data.copy_(ember.randn(c) * 0.1)


def test_mlp_with_dynamic_batch():
    model = nn.Sequential(
        nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)
    )
    proto, data = check(
        model,
        (ember.randn(4, 10),),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
    )
    assert [n.op_type for n in proto.graph.node] == [
        "MatMul", "Add", "Relu", "MatMul", "Add", "Tanh", "MatMul", "Add",
    ]  # fmt: skip
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {"0.bias", "2.bias", "4.bias"} <= {t.name for t in proto.graph.initializer}
    for n in (1, 7):
        x = ember.randn(n, 10)
        (y,) = run(data, {"x": x})
        with ember.no_grad():
            np.testing.assert_allclose(y, model(x).numpy(), atol=1e-5, rtol=1e-5)


def test_cnn_eval_mode_batchnorm_and_training_flags_restored():
    model = CNN()
    _randomize_bn(model)
    model.train()
    x = ember.randn(2, 3, 8, 8)
    proto, data = export_bytes(
        model, (x,), input_names=["x"], output_names=["probs", "logp"], dynamic_axes={"x": [0]}
    )
    assert model.training and model.bn1.training  # export ran it in eval mode, then restored
    model.eval()
    with ember.no_grad():
        want = model(x)
    assert_matches(run(data, {"x": x}), want)
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "MaxPool", "Relu", "Softmax", "LogSoftmax", "MatMul"} <= ops
    assert [n.op_type for n in proto.graph.node].count("BatchNormalization") == 2  # one op each
    x5 = ember.randn(5, 3, 8, 8)  # the batch axis is dynamic
    with ember.no_grad():
        assert_matches(run(data, {"x": x5}), model(x5))


@pytest.mark.parametrize("batch_first", [True, False])
def test_lstm(batch_first):
    lstm = nn.LSTM(4, 6, num_layers=2, batch_first=batch_first)

    def fn(x):
        out, (h, c) = lstm(x)
        return out, h, c

    x = ember.randn(3, 5, 4)
    proto, _ = check(fn, (x,), output_names=["out", "h", "c"])
    assert {"Sigmoid", "Tanh", "MatMul"} <= {n.op_type for n in proto.graph.node}


def test_lstm_module_with_initial_state():
    lstm = nn.LSTM(3, 4, batch_first=True)
    x, h0, c0 = ember.randn(2, 6, 3), ember.randn(1, 2, 4), ember.randn(1, 2, 4)
    check(lambda x, h, c: lstm(x, (h, c)), (x, h0, c0))
    # tensors inside a tuple argument are inputs too, named after the parameter
    proto, data = export_bytes(lstm, (x, (h0, c0)))
    assert [i.name for i in proto.graph.input] == ["input", "hx_0", "hx_1"]
    with ember.no_grad():
        assert_matches(run(data, {"input": x, "hx_0": h0, "hx_1": c0}), lstm(x, (h0, c0)))


def test_gru_bidirectional():
    gru = nn.GRU(3, 4, batch_first=True, bidirectional=True)
    check(gru, (ember.randn(2, 5, 3),))


def test_transformer_encoder_layer():
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True).eval()
    proto, _ = check(layer, (ember.randn(2, 5, 16),), atol=1e-4)
    assert {"Softmax", "LayerNormalization", "MatMul"} <= {n.op_type for n in proto.graph.node}


def test_file_path_and_reload(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
    path = tmp_path / "model.onnx"
    proto = ember.onnx.export(model, ember.randn(4, 3), str(path))
    loaded = onnx.load(str(path))
    assert loaded.graph.node[-1].op_type == "Sigmoid"
    assert loaded.SerializeToString() == proto.SerializeToString()
    assert loaded.producer_name == "ember"
    assert loaded.opset_import[0].version == ember.onnx.export.__globals__["DEFAULT_OPSET"]
    assert [i.name for i in loaded.graph.input] == ["input"]  # the forward's parameter name
    assert [o.name for o in loaded.graph.output] == ["output"]


def test_path_none_returns_the_model_only():
    proto = ember.onnx.export(lambda a, b: a @ b, (ember.ones(2, 3), ember.ones(3)), None)
    assert [i.name for i in proto.graph.input] == ["a", "b"]
    assert [n.op_type for n in proto.graph.node] == ["MatMul"]


def test_compiled_function_and_saved_graph(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    _randomize_bn(model)
    model.eval()
    fast = ember.compile(model)
    x = ember.randn(5, 3)
    with ember.no_grad():
        want = fast(x)
    static.save(fast, str(tmp_path / "m"))
    loaded = static.load(str(tmp_path / "m"))
    for src in (fast, fast.graph, loaded):
        proto, data = export_bytes(src, (x,), input_names=["x"])
        assert_matches(run(data, {"x": x}), want)
    names = {t.name for t in proto.graph.initializer}
    assert {"0.weight", "1.running_mean", "1.running_var"} <= names


def test_non_tensor_arguments_are_fixed_and_outputs_can_be_inputs_or_constants():
    def fn(x, scale, y):
        return x * scale, y, ember.ones(2), {"sum": x.sum() + y.sum()}

    x, y = ember.randn(2, 3), ember.randn(3)
    proto, data = export_bytes(fn, (x, 3.0, y), output_names=["a", "b", "c", "d"])
    assert [i.name for i in proto.graph.input] == ["x", "y"]
    got = run(data, {"x": x, "y": y})
    assert_matches(got, fn(x, 3.0, y))


def test_dead_code_is_left_out():
    def fn(x):
        _ = x.exp() * 2  # computed, but not returned
        return x + 1

    proto, _ = export_bytes(fn, (ember.randn(3),))
    assert [n.op_type for n in proto.graph.node] == ["Add"]


def test_import_ember_does_not_import_onnx():
    code = "import sys, ember; ember.onnx; assert 'onnx' not in sys.modules, 'loaded'"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
