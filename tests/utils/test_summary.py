"""ember.summary: rows in call order, shapes, counts, and no side effects on the model."""

import pytest

import ember
from ember import nn


def _model():
    return nn.Sequential(
        nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.ReLU()),
        nn.Flatten(),
        nn.Linear(8 * 6 * 6, 10),
    )


def test_rows_shapes_and_counts():
    s = ember.summary(_model(), (2, 1, 8, 8), print_fn=None)
    assert [(r.name, r.kind, r.depth) for r in s.rows] == [
        ("0", "Sequential", 0),
        ("0.0", "Conv2d", 1),
        ("0.1", "BatchNorm2d", 1),
        ("0.2", "ReLU", 1),
        ("1", "Flatten", 0),
        ("2", "Linear", 0),
    ]
    assert [r.output_shape for r in s.rows] == [
        (2, 8, 6, 6),
        (2, 8, 6, 6),
        (2, 8, 6, 6),
        (2, 8, 6, 6),
        (2, 288),
        (2, 10),
    ]
    assert [r.params for r in s.rows] == [None, 80, 16, 0, 0, 2890]
    assert s.total_params == s.trainable_params == 80 + 16 + 2890
    assert s.output_shape == (2, 10)


def test_prints_table_and_counts_frozen_parameters():
    model = _model()
    model[2].weight.requires_grad_(False)
    lines = []
    s = ember.summary(model, (1, 1, 8, 8), print_fn=lines.append)
    text = lines[0]
    assert text == str(s)
    assert "  0.1 (BatchNorm2d)" in text
    assert "Non-trainable params: 2,880" in text
    assert "Total params: 2,986" in text


def test_leaves_training_mode_and_batchnorm_statistics_alone():
    model = _model()
    bn = model[0][1]
    before = bn.running_mean.clone()
    ember.summary(model, (4, 1, 8, 8), print_fn=None)
    assert model.training and bn.training
    assert ember.equal(bn.running_mean, before)
    assert not bn._forward_hooks and not bn._forward_pre_hooks


def test_shape_error_names_the_module():
    with pytest.raises(ember.ShapeError, match=r"^2 \(Linear\): expected input with 288"):
        ember.summary(_model(), (1, 1, 10, 10), print_fn=None)


def test_rejects_non_modules():
    with pytest.raises(TypeError, match="summary: expected an ember.nn.Module, got function"):
        ember.summary(lambda x: x, (1,))
