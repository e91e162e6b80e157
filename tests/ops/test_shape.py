"""Op table for the shape / movement family (reshape ... tile), plus their error messages."""

import numpy as np
import pytest

import ember

from .harness import OpCase, generate


def _weighted_cat(m, parts):
    """Join multi-output results so every piece gets its own gradient."""
    return m.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


def _ints(*arrays):
    return lambda rng: arrays


CASES = [
    OpCase(
        "reshape",
        lambda m, a: a.reshape(4, -1),
        [(2, 3, 2)],
        ref=lambda a: a.reshape(4, 3),
        transpose=True,
    ),
    OpCase(
        "reshape_fn",
        lambda m, a: m.reshape(a, (-1,)),
        [(2, 3)],
        ref=lambda a: a.reshape(-1),
        transpose=True,
    ),
    OpCase("reshape_empty", lambda m, a: a.reshape(3, 0), [(0, 3)], ref=lambda a: a.reshape(3, 0)),
    OpCase("reshape_0d", lambda m, a: a.reshape(1, 1), [()], ref=lambda a: a.reshape(1, 1)),
    OpCase("view", lambda m, a: a.view(-1, 2), [(2, 3, 2)], ref=lambda a: a.reshape(-1, 2)),
    OpCase(
        "view_as",
        lambda m, a, b: a.view_as(b),
        [(6,), (2, 3)],
        nondiff=(1,),
        ref=lambda a, b: a.reshape(2, 3),
    ),
    OpCase(
        "reshape_as",
        lambda m, a, b: a.reshape_as(b),
        [(3, 2), (2, 3)],
        nondiff=(1,),
        ref=lambda a, b: a.reshape(2, 3),
        transpose=True,
    ),
    OpCase(
        "flatten",
        lambda m, a: m.flatten(a, 1),
        [(2, 3, 4)],
        ref=lambda a: a.reshape(2, 12),
        transpose=True,
    ),
    OpCase(
        "flatten_mid",
        lambda m, a: a.flatten(1, 2),
        [(2, 3, 4, 2)],
        ref=lambda a: a.reshape(2, 12, 2),
    ),
    OpCase("flatten_0d", lambda m, a: a.flatten(), [()], ref=lambda a: a.reshape(1)),
    OpCase(
        "unflatten",
        lambda m, a: a.unflatten(1, (2, -1)),
        [(3, 8)],
        ref=lambda a: a.reshape(3, 2, 4),
    ),
    OpCase("squeeze_all", lambda m, a: a.squeeze(), [(2, 1, 3, 1)], ref=lambda a: a.reshape(2, 3)),
    OpCase("squeeze_dim", lambda m, a: m.squeeze(a, 1), [(2, 1, 3)], ref=lambda a: a.reshape(2, 3)),
    OpCase("squeeze_noop", lambda m, a: a.squeeze(0), [(2, 1, 3)], ref=lambda a: a),
    OpCase(
        "squeeze_tuple",
        lambda m, a: a.squeeze((1, -1)),
        [(2, 1, 3, 1)],
        ref=lambda a: a.reshape(2, 3),
    ),
    OpCase("squeeze_0d", lambda m, a: a.squeeze(0), [()], ref=lambda a: a),
    OpCase(
        "unsqueeze",
        lambda m, a: m.unsqueeze(a, 1),
        [(2, 3)],
        ref=lambda a: a[:, None],
        transpose=True,
    ),
    OpCase("unsqueeze_neg", lambda m, a: a.unsqueeze(-1), [(2, 3)], ref=lambda a: a[..., None]),
    OpCase("unsqueeze_0d", lambda m, a: a.unsqueeze(0), [()], ref=lambda a: a.reshape(1)),
    OpCase(
        "expand",
        lambda m, a: a.expand(4, -1, 3),
        [(2, 1)],
        ref=lambda a: np.broadcast_to(a, (4, 2, 3)),
    ),
    OpCase(
        "expand_as",
        lambda m, a, b: a.expand_as(b),
        [(3,), (2, 3)],
        nondiff=(1,),
        ref=lambda a, b: np.broadcast_to(a, (2, 3)),
    ),
    OpCase(
        "broadcast_to",
        lambda m, a: m.broadcast_to(a, (2, 0, 3)),
        [(1, 3)],
        ref=lambda a: np.broadcast_to(a, (2, 0, 3)),
    ),
    OpCase(
        "permute", lambda m, a: a.permute(2, 0, 1), [(2, 3, 4)], ref=lambda a: a.transpose(2, 0, 1)
    ),
    OpCase(
        "permute_fn", lambda m, a: m.permute(a, (1, 0)), [(2, 3)], ref=lambda a: a.T, transpose=True
    ),
    OpCase(
        "transpose",
        lambda m, a: m.transpose(a, 0, -1),
        [(2, 3, 4)],
        ref=lambda a: a.swapaxes(0, -1),
    ),
    OpCase("swapaxes", lambda m, a: a.swapaxes(1, 2), [(2, 3, 4)], ref=lambda a: a.swapaxes(1, 2)),
    OpCase("t", lambda m, a: m.t(a), [(2, 3)], ref=lambda a: a.T),
    OpCase("t_1d", lambda m, a: a.t(), [(3,)], ref=lambda a: a),
    OpCase("T", lambda m, a: a.T, [(2, 3)], ref=lambda a: a.T),
    OpCase("mT", lambda m, a: a.mT, [(4, 2, 3)], ref=lambda a: a.swapaxes(-1, -2)),
    OpCase(
        "movedim",
        lambda m, a: m.movedim(a, 0, -1),
        [(2, 3, 4)],
        ref=lambda a: np.moveaxis(a, 0, -1),
    ),
    OpCase(
        "movedim_multi",
        lambda m, a: a.movedim((0, 1), (2, 0)),
        [(2, 3, 4)],
        ref=lambda a: np.moveaxis(a, (0, 1), (2, 0)),
    ),
    OpCase(
        "narrow",
        lambda m, a: m.narrow(a, 1, 1, 2),
        [(2, 4)],
        ref=lambda a: a[:, 1:3],
        transpose=True,
    ),
    OpCase("narrow_neg", lambda m, a: a.narrow(0, -2, 2), [(4, 2)], ref=lambda a: a[2:]),
    OpCase("select", lambda m, a: m.select(a, 1, -1), [(2, 3)], ref=lambda a: a[:, -1]),
    OpCase(
        "cat",
        lambda m, a, b: m.cat([a, b], 1),
        [(2, 3), (2, 2)],
        ref=lambda a, b: np.concatenate([a, b], 1),
        transpose=True,
    ),
    OpCase(
        "cat_three",
        lambda m, a, b, c: m.cat((a, b, c)),
        [(1, 2), (3, 2), (0, 2)],
        ref=lambda a, b, c: np.concatenate([a, b, c]),
    ),
    OpCase(
        "cat_neg_dim",
        lambda m, a, b: m.concat([a, b], dim=-1),
        [(2, 1), (2, 3)],
        ref=lambda a, b: np.concatenate([a, b], -1),
    ),
    OpCase(
        "cat_legacy_empty",
        lambda m, a, b: m.cat([a, b], 1),
        [(0,), (2, 3)],
        nondiff=(0,),
        ref=lambda a, b: b,
    ),
    OpCase(
        "cat_promote",
        lambda m, a, b: m.cat([a, b]),
        [(2,), (3,)],
        make=_ints(np.array([1, 2], np.int32), np.array([0.5, 1.5, 2.5])),
        ref=lambda a, b: np.concatenate([a, b]),
    ),
    OpCase(
        "stack",
        lambda m, a, b: m.stack([a, b]),
        [(2, 3), (2, 3)],
        ref=lambda a, b: np.stack([a, b]),
        transpose=True,
    ),
    OpCase(
        "stack_last",
        lambda m, a, b: m.stack((a, b), dim=-1),
        [(2, 3), (2, 3)],
        ref=lambda a, b: np.stack([a, b], -1),
    ),
    OpCase(
        "stack_0d", lambda m, a, b: m.stack([a, b]), [(), ()], ref=lambda a, b: np.stack([a, b])
    ),
    OpCase(
        "hstack",
        lambda m, a, b: m.hstack([a, b]),
        [(2, 1), (2, 3)],
        ref=lambda a, b: np.hstack([a, b]),
    ),
    OpCase(
        "vstack",
        lambda m, a, b: m.vstack([a, b]),
        [(3,), (2, 3)],
        ref=lambda a, b: np.vstack([a, b]),
    ),
    OpCase(
        "split_int",
        lambda m, a: _weighted_cat(m, a.split(2)),
        [(5, 2)],
        ref=lambda a: np.concatenate([a[:2].ravel(), 2 * a[2:4].ravel(), 3 * a[4:].ravel()]),
    ),
    OpCase(
        "split_sizes",
        lambda m, a: _weighted_cat(m, m.split(a, [1, 3], dim=1)),
        [(2, 4)],
        ref=lambda a: np.concatenate([a[:, :1].ravel(), 2 * a[:, 1:].ravel()]),
        transpose=True,
    ),
    OpCase(
        "chunk",
        lambda m, a: _weighted_cat(m, m.chunk(a, 3, 1)),
        [(2, 5)],
        ref=lambda a: np.concatenate(
            [a[:, :2].ravel(), 2 * a[:, 2:4].ravel(), 3 * a[:, 4:].ravel()]
        ),
    ),
    OpCase(
        "tensor_split",
        lambda m, a: _weighted_cat(m, m.tensor_split(a, 3)),
        [(5,)],
        ref=lambda a: np.concatenate([a[:2], 2 * a[2:4], 3 * a[4:]]),
    ),
    OpCase(
        "split_with_sizes",
        lambda m, a: _weighted_cat(m, m.split_with_sizes(a, [2, 1], 1)),
        [(2, 3)],
        ref=lambda a: np.concatenate([a[:, :2].ravel(), 2 * a[:, 2:].ravel()]),
    ),
    OpCase(
        "hsplit",
        lambda m, a: _weighted_cat(m, m.hsplit(a, 2)),
        [(3, 4)],
        ref=lambda a: np.concatenate([a[:, :2].ravel(), 2 * a[:, 2:].ravel()]),
    ),
    OpCase(
        "hsplit_1d_indices",
        lambda m, a: _weighted_cat(m, a.hsplit([1, 3])),
        [(5,)],
        ref=lambda a: np.concatenate([a[:1], 2 * a[1:3], 3 * a[3:]]),
    ),
    OpCase(
        "vsplit",
        lambda m, a: _weighted_cat(m, a.vsplit([1])),
        [(3, 2)],
        ref=lambda a: np.concatenate([a[:1].ravel(), 2 * a[1:].ravel()]),
    ),
    OpCase(
        "dsplit",
        lambda m, a: _weighted_cat(m, m.dsplit(a, 3)),
        [(2, 1, 6)],
        ref=lambda a: np.concatenate(
            [(k + 1) * a[..., 2 * k : 2 * k + 2].ravel() for k in range(3)]
        ),
    ),
    OpCase(
        "sum_to_size",
        lambda m, a: a.sum_to_size(3, 1),
        [(2, 3, 4)],
        ref=lambda a: a.sum(axis=(0, 2))[:, None],
    ),
    OpCase(
        "unbind",
        lambda m, a: _weighted_cat(m, a.unbind(1)),
        [(2, 3)],
        ref=lambda a: np.concatenate([a[:, 0], 2 * a[:, 1], 3 * a[:, 2]]),
    ),
    OpCase(
        "flip",
        lambda m, a: m.flip(a, (0, 2)),
        [(2, 3, 2)],
        ref=lambda a: a[::-1, :, ::-1],
        transpose=True,
    ),
    OpCase("flip_int", lambda m, a: a.flip(-1), [(3,)], ref=lambda a: a[::-1]),
    OpCase("flipud", lambda m, a: m.flipud(a), [(3, 2)], ref=np.flipud),
    OpCase("atleast_1d", lambda m, a: m.atleast_1d(a), [()], ref=np.atleast_1d),
    OpCase("atleast_1d_noop", lambda m, a: m.atleast_1d(a), [(2, 3)], ref=np.atleast_1d),
    OpCase("clone", lambda m, a: m.clone(a), [(2, 3)], ref=np.copy, transpose=True),
    OpCase("fliplr", lambda m, a: m.fliplr(a), [(2, 3)], ref=np.fliplr),
    OpCase(
        "roll_flat",
        lambda m, a: m.roll(a, 2),
        [(2, 3)],
        ref=lambda a: np.roll(a, 2),
        transpose=True,
    ),
    OpCase(
        "roll_dims",
        lambda m, a: a.roll((1, -1), (0, 1)),
        [(3, 4)],
        ref=lambda a: np.roll(a, (1, -1), (0, 1)),
    ),
    OpCase(
        "repeat",
        lambda m, a: a.repeat(2, 3),
        [(2, 3)],
        ref=lambda a: np.tile(a, (2, 3)),
        transpose=True,
    ),
    OpCase(
        "repeat_new_dims",
        lambda m, a: a.repeat(2, 1, 2),
        [(3,)],
        ref=lambda a: np.tile(a, (2, 1, 2)),
    ),
    OpCase("repeat_zero", lambda m, a: a.repeat(0, 2), [(2, 3)], ref=lambda a: np.tile(a, (0, 2))),
    OpCase("tile", lambda m, a: m.tile(a, (2,)), [(2, 3)], ref=lambda a: np.tile(a, 2)),
    OpCase("ravel", lambda m, a: m.ravel(a), [(2, 3)], ref=np.ravel, transpose=True),
]
generate(globals(), CASES)


# -- dtypes, views, errors ----------------------------------------------------------------------


def test_views_share_storage_and_version():
    x = ember.zeros(2, 3)
    for v in (
        x.view(6),
        x.t(),
        x.unsqueeze(0),
        x.squeeze(),
        x.narrow(1, 0, 2),
        x.select(0, 1),
        x.split(1)[0],
        x.unbind(0)[1],
        x.transpose(0, 1),
        x.movedim(0, 1),
        x.T,
        x.flatten(),
        x.expand(2, 2, 3),
    ):
        assert v._base is x, v.shape
        assert v._version is x._version
    x.t().reshape(6)[0] = 1.0  # a copy (non-contiguous reshape): x is unchanged
    assert x.sum().item() == 0
    y = x.view(6)
    y[1] = 2.0
    assert x[0, 1].item() == 2.0 and x._version[0] == 1
    assert x.flip(0)._base is None and x.repeat(1, 1)._base is None


def test_cat_promotion_matches_torch():
    import torch

    for a, b in [("int32", "float16"), ("uint8", "int8"), ("bool", "int64"), ("float64", "int64")]:
        e = ember.cat(
            [ember.zeros(2, dtype=getattr(ember, a)), ember.zeros(1, dtype=getattr(ember, b))]
        )
        t = torch.cat(
            [torch.zeros(2, dtype=getattr(torch, a)), torch.zeros(1, dtype=getattr(torch, b))]
        )
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "fn, err, match",
    [
        (
            lambda: ember.zeros(2, 3).reshape(4, -1),
            ember.ShapeError,
            r"reshape: shape \[4, -1\] is invalid for input of shape \[2, 3\] \(6 elements\)",
        ),
        (lambda: ember.zeros(2, 3).view(-1, -1), ember.ShapeError, "only one dimension"),
        (
            lambda: ember.cat([ember.zeros(2, 3), ember.zeros(2, 4)]),
            ember.ShapeError,
            r"cat: sizes of tensors must match except in dimension 0\. Expected size 3 but got "
            r"size 4 for tensor number 1 in the list \(shapes \[2, 3\] and \[2, 4\]\)",
        ),
        (
            lambda: ember.cat([ember.zeros(2, 3), ember.zeros(3)]),
            ember.ShapeError,
            "same number of dimensions",
        ),
        (lambda: ember.cat([ember.tensor(1.0)]), ember.ShapeError, "zero-dimensional tensor"),
        (lambda: ember.cat([]), ember.ShapeError, "non-empty"),
        (lambda: ember.cat(ember.zeros(2)), ember.DTypeError, "single Tensor"),
        (
            lambda: ember.stack([ember.zeros(2, 3), ember.zeros(2, 4)]),
            ember.ShapeError,
            r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and "
            r"\[2, 4\] at entry 1",
        ),
        (
            lambda: ember.zeros(2, 3).expand(2, 4),
            ember.ShapeError,
            r"expanded size of the tensor \(4\) must match the existing size \(3\) at "
            r"non-singleton dimension 1",
        ),
        (lambda: ember.zeros(3).expand(-1, 3), ember.ShapeError, "leading, non-existing"),
        (lambda: ember.zeros(2, 3).expand(3), ember.ShapeError, "number of sizes"),
        (lambda: ember.zeros(2, 3).permute(0, 0), ember.ShapeError, "multiple times"),
        (lambda: ember.zeros(2, 3).permute(0), ember.ShapeError, "number of dims"),
        (
            lambda: ember.zeros(2, 3).transpose(0, 2),
            ember.EmberIndexError,
            r"transpose: dimension out of range \(expected to be in range of \[-2, 1\], "
            r"but got 2\)",
        ),
        (lambda: ember.zeros(2, 3, 4).t(), ember.ShapeError, "<= 2 dimensions"),
        (lambda: ember.zeros(2, 3).flatten(1, 0), ember.ShapeError, "start_dim cannot come after"),
        (
            lambda: ember.zeros(4).narrow(0, 2, 3),
            ember.EmberIndexError,
            r"start \(2\) \+ length \(3\) exceeds dimension size \(4\)",
        ),
        (lambda: ember.zeros(2, 3).select(1, 3), ember.EmberIndexError, "index 3 out of range"),
        (
            lambda: ember.zeros(5).split([2, 2]),
            ember.ShapeError,
            r"split_sizes to sum exactly to 5 .* split_sizes=\[2, 2\]",
        ),
        (lambda: ember.zeros(5).chunk(0), ember.ShapeError, "greater than 0"),
        (
            lambda: ember.hsplit(ember.zeros(2, 4), 3),
            ember.ShapeError,
            "not divisible by the split_size 3",
        ),
        (
            lambda: ember.vsplit(ember.zeros(4), 2),
            ember.ShapeError,
            "at least 2 dimension, but got a tensor with 1",
        ),
        (
            lambda: ember.dsplit(ember.zeros(2, 2), 2),
            ember.ShapeError,
            "at least 3 dimension, but got a tensor with 2",
        ),
        (
            lambda: ember.zeros(2, 3).sum_to_size(3, 3),
            ember.ShapeError,
            r"size \[3, 3\] is not expandable to size \[2, 3\]",
        ),
        (lambda: ember.zeros(2, 3).repeat(2), ember.ShapeError, "can not be smaller"),
        (lambda: ember.zeros(3).roll((1, 2), 0), ember.ShapeError, "must align"),
        (lambda: ember.zeros(2).unsqueeze(3), ember.EmberIndexError, "dimension out of range"),
        (lambda: ember.zeros(2, 3).flip((0, 0)), ember.ShapeError, "multiple times"),
        (lambda: ember.zeros(2, 3).movedim((0, 1), 0), ember.ShapeError, "same number of dims"),
    ],
)
def test_errors(fn, err, match):
    with pytest.raises(err, match=match):
        fn()


def test_infer_matches_forward():
    from ember.ops.base import Spec
    from ember.ops.movement import Cat, Reshape

    a, b = ember.zeros(2, 3), ember.zeros(2, 4)
    spec = Cat(1).infer(Spec((2, 3), ember.float32), Spec((2, 4), ember.float32))
    assert spec.shape == tuple(ember.cat([a, b], 1).shape)
    assert Reshape((3, 2)).infer(Spec((6,), ember.float32)).shape == (3, 2)
