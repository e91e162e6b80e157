"""Wrong calls that used to give an unclear error or none (issue 16, item 9): each is refused
where PyTorch refuses it, with an error naming the function, the argument and its value.
Pooling windows (stride, kernel, padding, dilation), convolutions' strides and channels (in
conv1d's own terms), unfold/fold and pixel (un)shuffle factors, ctc_loss's blank and targets,
embedding's weight and padding_idx, and iterating or taking len() of a 0-d tensor."""

import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X4 = np.ones((1, 1, 4, 4), np.float32)
X3 = np.ones((1, 1, 4), np.float32)

# (call on ember or torch, ember's error class, ember's message (plain text)); PyTorch refuses
# each call too
REFUSED = [
    (
        lambda m: m.nn.functional.conv_transpose2d(
            m.ones(1, 2, 4, 4), m.ones(2, 3, 3, 3), stride=0
        ),
        ember.ShapeError,
        "conv_transpose2d: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.conv_transpose1d(m.ones(1, 2, 5), m.ones(2, 3, 3), stride=0),
        ember.ShapeError,
        "conv_transpose1d: stride must be greater than zero, got stride=0",
    ),
    (
        lambda m: m.nn.functional.conv1d(m.ones(1, 2, 5), m.ones(3, 2, 3), stride=0),
        ember.ShapeError,
        "conv1d: stride must be greater than zero, got stride=0",
    ),
    (
        lambda m: m.nn.functional.conv1d(m.ones(1, 2, 5), m.ones(3, 4, 3)),
        ember.ShapeError,
        "conv1d: expected input with 4 channels, got 2 (input shape (1, 2, 5), weight shape "
        "(3, 4, 3), groups=1)",
    ),
    (
        lambda m: m.nn.functional.unfold(m.ones(1, 2, 4, 4), 2, stride=0),
        ember.ShapeError,
        "unfold: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.fold(m.ones(1, 8, 4), (4, 4), 2, stride=0),
        ember.ShapeError,
        "fold: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 4, 2, 2), 0),
        ember.ShapeError,
        "pixel_shuffle: upscale_factor must be greater than zero, got upscale_factor=0",
    ),
    (
        lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 4, 2, 2), 0),
        ember.ShapeError,
        "pixel_unshuffle: downscale_factor must be greater than zero, got downscale_factor=0",
    ),
    (
        lambda m: m.nn.functional.max_pool2d(m.tensor(X4), 2, stride=0),
        ember.ShapeError,
        "max_pool2d: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.avg_pool2d(m.tensor(X4), 2, stride=0),
        ember.ShapeError,
        "avg_pool2d: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.max_pool2d(m.tensor(X4), 2, stride=(1, 0)),
        ember.ShapeError,
        "max_pool2d: stride must be greater than zero, got stride=(1, 0)",
    ),
    (
        lambda m: m.nn.functional.avg_pool2d(m.tensor(X4), 2, stride=-1),
        ember.ShapeError,
        "avg_pool2d: stride must be greater than zero, got stride=(-1, -1)",
    ),
    (
        lambda m: m.nn.functional.max_pool1d(m.tensor(X3), 2, stride=0),
        ember.ShapeError,
        "max_pool1d: stride must be greater than zero, got stride=0",
    ),
    (
        lambda m: m.nn.functional.avg_pool1d(m.tensor(X3), 2, stride=0),
        ember.ShapeError,
        "avg_pool1d: stride must be greater than zero, got stride=0",
    ),
    (
        lambda m: m.nn.MaxPool2d(2, 0)(m.tensor(X4)),
        ember.ShapeError,
        "stride must be greater than zero",
    ),
    (
        lambda m: m.nn.AvgPool2d(2, 0)(m.tensor(X4)),
        ember.ShapeError,
        "stride must be greater than zero",
    ),
    (
        lambda m: m.nn.functional.lp_pool2d(m.tensor(X4), 2, 2, stride=0),
        ember.ShapeError,
        "lp_pool2d: stride must be greater than zero, got stride=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.max_pool2d(m.tensor(X4), 0),
        ember.ShapeError,
        "max_pool2d: kernel_size must be greater than zero, got kernel_size=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.avg_pool2d(m.tensor(X4), -1),
        ember.ShapeError,
        "avg_pool2d: kernel_size must be greater than zero, got kernel_size=(-1, -1)",
    ),
    (
        lambda m: m.nn.functional.max_pool2d(m.tensor(X4), 2, padding=-1),
        ember.ShapeError,
        "max_pool2d: padding must be non-negative, got padding=(-1, -1)",
    ),
    (
        lambda m: m.nn.functional.max_pool1d(m.tensor(X3), 2, padding=-1),
        ember.ShapeError,
        "max_pool1d: padding must be non-negative, got padding=-1",
    ),
    (
        lambda m: m.nn.functional.max_pool2d(m.tensor(X4), 2, dilation=0),
        ember.ShapeError,
        "max_pool2d: dilation must be greater than zero, got dilation=(0, 0)",
    ),
    (
        lambda m: m.nn.functional.ctc_loss(*_ctc(m), blank=4),
        ember.EmberIndexError,
        "ctc_loss: blank must be in label range [0, 4) of the 4 classes of log_probs "
        "(5, 2, 4), got blank=4",
    ),
    (
        lambda m: m.nn.functional.ctc_loss(*_ctc(m), blank=-1),
        ember.EmberIndexError,
        "ctc_loss: blank must be in label range [0, 4)",
    ),
    (
        lambda m: m.nn.functional.embedding(m.tensor([0, 1]), m.ones(5)),
        ember.ShapeError,
        "embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape (5,)",
    ),
    (
        lambda m: m.nn.functional.embedding(m.tensor([0, 1]), m.ones(5, 2, 2)),
        ember.ShapeError,
        "embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape (5, 2, 2)",
    ),
    (
        lambda m: m.nn.functional.embedding(m.tensor([0]), m.ones(5, 2), padding_idx=5),
        ember.ShapeError,
        "embedding: padding_idx must be within num_embeddings (5), got 5",
    ),
    (lambda m: list(m.tensor(3.0)), TypeError, "iteration over a 0-d tensor"),
    (lambda m: [v for v in m.tensor(3)], TypeError, "iteration over a 0-d tensor"),
    (lambda m: (lambda *a: a)(*m.tensor(3)), TypeError, "iteration over a 0-d tensor"),
    (lambda m: len(m.tensor(3.0)), TypeError, "len() of a 0-d tensor"),
]


def _ctc(m, targets=((1, 2), (1, 1))):
    g = np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32)
    lp = m.tensor(g).log_softmax(2)
    return lp, m.tensor(list(targets)), m.tensor([5, 5]), m.tensor([2, 2])


@pytest.mark.parametrize("call, error, message", REFUSED)
def test_refused_like_torch_with_a_clear_message(call, error, message):
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError, AssertionError)):
        call(torch)
    with pytest.raises(error, match=re.escape(message)):
        call(ember)


def test_zero_d_tensor_errors_are_also_ember_errors():
    with pytest.raises(ember.EmberError, match="iteration over a 0-d tensor"):
        iter(ember.tensor(1))


def test_what_still_works_like_torch():
    F, tF = ember.nn.functional, torch.nn.functional
    x = np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4)
    for kw in [dict(stride=1), dict(stride=(1, 2)), dict(padding=1), dict(stride=3)]:
        a = F.max_pool2d(ember.tensor(x), 2, **kw).numpy()
        assert np.allclose(a, tF.max_pool2d(torch.tensor(x), 2, **kw).numpy()), kw
        a = F.avg_pool2d(ember.tensor(x), 2, **kw).numpy()
        assert np.allclose(a, tF.avg_pool2d(torch.tensor(x), 2, **kw).numpy()), kw
    assert [t.tolist() for t in ember.tensor([1, 2])] == [1, 2]
    assert list(ember.ones(0, 2)) == []
    assert len(ember.ones(3, 2)) == 3
    assert F.embedding(ember.tensor([4]), ember.eye(5), padding_idx=-1).tolist() == [
        [0.0, 0.0, 0.0, 0.0, 1.0]
    ]


def test_ctc_padding_past_the_target_length_is_not_read():
    # padded with -1 (or any value) past each target's length, as PyTorch allows
    padded = ((1, 2, -1), (1, 1, 9))
    ours = ember.nn.functional.ctc_loss(*_ctc(ember, padded))
    theirs = torch.nn.functional.ctc_loss(*_ctc(torch, padded))
    assert np.isclose(ours.item(), theirs.item(), rtol=1e-5)
    assert np.isclose(ours.item(), ember.nn.functional.ctc_loss(*_ctc(ember)).item())


def test_ctc_target_out_of_range_is_an_error():
    # (PyTorch's CPU kernel reads past the class dimension here: ember refuses)
    with pytest.raises(
        ember.EmberIndexError,
        match=re.escape("ctc_loss: targets must be class indices in [0, 4), got 7 (in target 0)"),
    ):
        ember.nn.functional.ctc_loss(*_ctc(ember, ((7, 2), (1, 1))))
