# ruff: noqa: E501  (the table keeps one case per line)
"""Per-op checks: each case is exported, run in onnxruntime and compared with eager ember
(float32 unless the case says otherwise), and the model passes ``onnx.checker``."""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402
from ember.ops.attention import Attention  # noqa: E402
from ember.ops.base import apply  # noqa: E402
from ember.ops.elementwise import ClampGrad  # noqa: E402
from ember.ops.indexing import BasicIndexGrads  # noqa: E402
from tests.onnx.helpers import check  # noqa: E402


@dataclass
class Case:
    name: str
    fn: Callable
    shapes: list  # shapes of float32 normal inputs, or a callable(rng) -> list of arrays
    opset: int | None = None
    dynamic: dict = field(default_factory=dict)  # input index -> dynamic axes
    more: list = field(default_factory=list)  # other shapes to run a dynamic model on
    atol: float = 1e-5


def _ints(*shapes, lo=-5, hi=6, dtype=np.int64):
    return lambda rng: [rng.integers(lo, hi, s).astype(dtype) for s in shapes]


def _pos(*shapes):
    return lambda rng: [rng.uniform(0.1, 2.0, s).astype(np.float32) for s in shapes]


def _unit(*shapes):
    return lambda rng: [rng.uniform(-0.9, 0.9, s).astype(np.float32) for s in shapes]


def _bools(*shapes):
    return lambda rng: [rng.random(s) > 0.5 for s in shapes]


def _setitem(x):
    y = x.clone()
    y[0] = 1.0
    y[:, 1:3] *= 2
    return y


def _setitem_index(x, i):
    y = x.clone()
    y[i] = 0.0
    return y


_G = ember.Generator().manual_seed(3)
W = {
    "conv": ember.randn(4, 3, 3, 3, generator=_G),
    "group": ember.randn(6, 2, 3, 3, generator=_G),
    "conv1d": ember.randn(4, 3, 3, generator=_G),
    "convt": ember.randn(3, 2, 3, 3, generator=_G),
    "convt_g": ember.randn(4, 1, 3, 3, generator=_G),
    "ln_w": ember.randn(5, generator=_G),
    "ln_b": ember.randn(5, generator=_G),
}
IDX = ember.tensor([[0, 2], [1, 0], [2, 1]])

# fmt: off
CASES = [
    # elementwise
    Case("unary_math", lambda x: x.exp() + x.abs().sqrt() + x.sin() * x.cos() + x.tanh(), [(3, 4)]),
    Case("unary_more", lambda x: x.sigmoid() + x.atan() + x.sinh() + x.erf() + x.erfc(), [(3, 4)]),
    Case("logs", lambda x: x.log() + x.log2() + x.log10() + x.log1p() + x.rsqrt(), _pos((3, 4))),
    Case("expm1_reciprocal", lambda x: x.expm1() + x.reciprocal() + x.tan(), _pos((3, 4))),
    Case("inverse_trig", lambda x: x.asin() + x.acos(), _unit((3, 4))),
    Case("pow", lambda x, y: x**y + x**3 + x**0.5 + x**-1, _pos((3, 4), (4,))),
    Case("rounding", lambda x: (x * 3).floor() + (x * 3).ceil() + (x * 3).trunc() + (x * 3).round(), [(3, 4)]),
    Case("round_decimals", lambda x: (x * 10).round(decimals=1), [(3, 4)]),
    Case("sign_neg", lambda x: x.sign() - x, [(3, 4)]),
    Case("arith_broadcast", lambda x, y: (x + y) * (x - y) / (y * y + 1), [(2, 3, 4), (3, 1)]),
    Case("int_arith", lambda a, b: a * b + a - b, _ints((3, 4), (4,))),
    Case("floor_divide_int", lambda a, b: a // b, lambda rng: [rng.integers(-9, 9, (3, 4)), rng.choice([-3, -2, 2, 3], (4,))]),
    Case("floor_divide_float", lambda a, b: a // b, [(3, 4), (4,)]),
    Case("remainder", lambda a, b: ember.remainder(a, b) + ember.fmod(a, b), [(3, 4), (4,)]),
    Case("remainder_int", lambda a, b: a % b + ember.fmod(a, b), lambda rng: [rng.integers(-9, 9, (3, 4)), rng.choice([-3, -2, 2, 3], (4,))]),
    Case("div_trunc", lambda a, b: ember.div(a, b, rounding_mode="trunc"), [(3, 4), (4,)]),
    Case("atan2", lambda a, b: ember.atan2(a, b), lambda rng: [np.array([1, -1, 0, 0, 2, -2], np.float32), np.array([0, 0, 1, -1, -3, -3], np.float32)]),
    Case("maximum_minimum", lambda a, b: ember.maximum(a, b) - ember.minimum(a, b), [(3, 4), (4,)]),
    Case("clamp", lambda x: x.clamp(-0.5, 0.5) + x.clamp(min=0.1) + x.clamp(max=0.2), [(3, 4)]),
    Case("clamp_tensor", lambda x, lo: x.clamp(min=lo, max=lo + 1), [(3, 4), (4,)]),
    Case("clamp_grad", lambda g, x: sum(apply(ClampGrad(lo, hi), g, x) for lo, hi in ((-0.5, 0.5), (0.1, None), (None, 0.2), (None, None))), [(3, 4), (3, 4)]),
    Case("basic_index_grads", lambda a, b: apply(BasicIndexGrads(((("s", 0, 2, None),), (("s", 2, 5, None),)), (5, 3)), a, b), [(2, 3), (3, 3)]),
    Case("basic_index_grads_overlapping", lambda a, b: apply(BasicIndexGrads(((("s", None, None, None), 1), (("s", None, None, None), 1)), (4, 3)), a, b), [(4,), (4,)], opset=16),
    Case("compare", lambda a, b: (a < b) ^ (a >= b) | (a == b) & (a != b), [(3, 4), (4,)]),
    Case("compare_gt_le", lambda a, b: (a > b).logical_xor(a <= b), [(3, 4), (4,)]),
    Case("isclose", lambda a, b: ember.isclose(a, a + b * 1e-6), [(3, 4), (3, 4)]),
    Case("isnan_isinf", lambda x: ember.isfinite(x) | ember.isnan(x) ^ ember.isinf(x), lambda rng: [np.array([0, np.inf, -np.inf, np.nan, 1], np.float32)]),
    Case("logical", lambda a, b: ember.logical_and(a, b) | ~ember.logical_or(a, b), _bools((3, 4), (4,))),
    Case("bool_add_mul", lambda a, b: (a + b) | (a * b), _bools((3, 4), (4,))),
    Case("bitwise_int", lambda a, b: (a & b) | (a ^ b) | ~a, _ints((3, 4), (4,)), opset=18),
    Case("invert_uint8", lambda a: ~a, _ints((5,), lo=0, hi=255, dtype=np.uint8)),
    Case("where", lambda x, y: ember.where(x > 0, x, y), [(3, 4), (4,)]),
    Case("cast", lambda x: (x * 4).to(ember.int32).to(ember.float32) + x.double().float(), [(3, 4)]),
    Case("activations", lambda x: F.gelu(x) + F.silu(x) + F.elu(x) + F.leaky_relu(x, 0.1) + F.softplus(x), [(3, 4)]),
    Case("hard_activations", lambda x: F.hardtanh(x) + F.relu6(x) + F.hardswish(x) + F.hardsigmoid(x), [(3, 4)]),
    # reductions
    Case("sum_mean", lambda x: x.sum() + x.sum(1).mean() + x.mean((0, 2), keepdim=True).sum(), [(2, 3, 4)]),
    Case("prod", lambda x: x.prod(1) + x.prod(), [(2, 3)]),
    Case("amax_amin", lambda x: x.amax(1) + x.amin((0, 1)), [(2, 3, 4)]),
    Case("max_min_dim", lambda x: x.max(1)[0] + x.min(0, keepdim=True)[0].sum() + x.max(), [(3, 4)]),
    Case("argmax_argmin", lambda x: x.argmax(1) + x.argmin(0, keepdim=True).sum() + x.argmax(), [(3, 4)]),
    Case("var_std_norm", lambda x: x.var(1) + x.std(0).sum() + x.norm(dim=1) + x.norm(p=3, dim=1), [(3, 4)]),
    Case("logsumexp", lambda x: x.logsumexp(1) + x.logsumexp((0, 1)), [(3, 4)]),
    Case("cumsum_cumprod", lambda x: x.cumsum(1) + x.cumprod(0), [(3, 4)]),
    Case("all_any", lambda x: (x > 0).all(1) | (x > 1).any(0).all(), [(3, 4)]),
    Case("sum_int_bool", lambda x: x.sum(0) + (x > 0).sum(), _ints((3, 4))),
    # shapes
    Case("reshape_view_flatten", lambda x: x.reshape(4, 6).t().flatten() + x.view(-1), [(2, 3, 4)]),
    Case("permute_transpose", lambda x: x.permute(2, 0, 1).transpose(0, 2).contiguous(), [(2, 3, 4)]),
    Case("squeeze_unsqueeze", lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze(0) * 2, [(3, 1, 4)]),
    Case("cat_stack", lambda x, y: ember.cat([x, y], 1) + ember.stack([x, y]).sum(0).repeat(1, 2), [(2, 3), (2, 3)]),
    Case("chunk_split", lambda x: ember.cat(list(reversed(x.chunk(3, 1))), 1), [(2, 6)]),
    Case("flip_roll", lambda x: x.flip((0, 1)).roll(1, 1) + x.roll(-2), [(3, 4)]),
    Case("expand_repeat", lambda x: x.expand(2, 3, 4) + x.repeat(2, 1, 1), [(3, 1)]),
    Case("pad", lambda x: F.pad(x, (1, 2, 0, 1), value=3.0) + 1, [(2, 3, 4)]),
    Case("pad_reflect", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), [(1, 2, 5, 5)]),
    # indexing
    Case("basic_index", lambda x: x[1:, ::2] * x[0, 1:3].sum() + x[None, -1, :2].sum(), [(3, 4)]),
    Case("step_slices", lambda x: x[1::2, ::3] + x[:2, -1:] + x[-2:, 4:1000], [(5, 6)]),
    Case("adv_index", lambda x: x[IDX[:, 0]] + x[:, IDX[0]].sum(), [(3, 4)]),
    Case("adv_two_tensors", lambda x: x[IDX[:, 0], IDX[:, 1]] + x[IDX, 1:].sum(), [(3, 4)]),
    Case("adv_apart", lambda x: x[IDX[:2, 0], :, IDX[:2, 1]], [(3, 4, 5)]),
    Case("adv_adjacent_mid", lambda x: x[:, IDX[:2, 0], IDX[:2, 1]], [(2, 3, 4, 5)]),
    Case("gather", lambda x: x.gather(1, IDX) + x.gather(0, IDX[:2]).sum(), [(3, 4)]),
    Case("take_index_input", lambda x, i: ember.take(x, i) + x.index_fill(1, i[:2] % 4, 0.5).sum(), lambda rng: [rng.standard_normal((3, 4)).astype(np.float32), np.array([0, -1, 5, -12, 11])]),
    Case("index_add_copy_input", lambda x, i, s: x.index_add(1, i, s) + x.index_copy(0, i[:1] % 3, s[:1, :4]).sum(), lambda rng: [rng.standard_normal((3, 4)).astype(np.float32), np.array([3, 0, 1, 3, 0]), rng.standard_normal((3, 5)).astype(np.float32)]),
    Case("masked_scatter_mask_input", lambda x, m, s: x.masked_scatter(m > 0, s), lambda rng: [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32), rng.standard_normal(13).astype(np.float32)]),
    Case("cummax_cummin_mode", lambda x: (x.cummax(0).indices, x.cummin(1), ember.mode(x.round(), 0)), [(3, 4)]),
    Case("scatter", lambda x, s: x.scatter(1, IDX, s) + x.scatter_add(0, IDX[:2], s[:2]), [(3, 4), (3, 2)]),
    Case("setitem", _setitem, [(3, 4)]),
    Case("setitem_index_tensor", lambda x: _setitem_index(x, IDX[0]), [(3, 4)]),
    # linear algebra
    Case("matmul", lambda a, b: a @ b + (a @ b[:, 0]).unsqueeze(1), [(3, 4), (4, 2)]),
    Case("bmm_broadcast", lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    Case("einsum", lambda a, b: ember.einsum("bij,bjk->bik", a, b) + ember.einsum("bii->bi", a[:, :, :3]).sum(), [(2, 3, 4), (2, 4, 3)]),
    Case("linear", lambda x: F.linear(x, ember.ones(2, 4), ember.ones(2)), [(3, 4)]),
    # neural-network ops
    Case("conv2d", lambda x: F.conv2d(x, W["conv"], stride=2, padding=2, dilation=2), [(2, 3, 9, 9)]),
    Case("conv2d_groups_same", lambda x: F.conv2d(x, W["group"], groups=3, padding="same"), [(2, 6, 7, 7)]),
    Case("conv1d", lambda x: F.conv1d(x, W["conv1d"], padding=1), [(2, 3, 9)]),
    Case("conv_transpose", lambda x: F.conv_transpose2d(x, W["convt"], stride=2, padding=1, output_padding=1), [(2, 3, 5, 5)]),
    Case("conv_transpose_groups", lambda x: F.conv_transpose2d(x, W["convt_g"], stride=2, groups=2, dilation=2), [(2, 4, 5, 5)]),
    Case("max_pool", lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True) + 1, [(2, 3, 8, 8)]),
    Case("max_pool_dilation", lambda x: F.max_pool2d(x, 2, 1, dilation=2), [(2, 3, 7, 7)]),
    Case("max_pool_indices", lambda x: F.max_pool2d(x, 3, 2, padding=1, return_indices=True), [(2, 3, 8, 8)]),
    Case("max_pool1d", lambda x: F.max_pool1d(x, 2), [(2, 3, 8)]),
    Case("avg_pool", lambda x: F.avg_pool2d(x, 2) + F.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False), [(2, 3, 8, 8)]),
    Case("adaptive_avg_pool", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [(2, 3, 7, 8)]),
    Case("unfold", lambda x: F.unfold(x, 3, padding=1, stride=2), [(2, 3, 6, 6)]),
    Case("fold", lambda x: F.fold(x, (4, 4), 2), [(2, 12, 9)], opset=18),
    Case("softmax", lambda x: F.softmax(x, dim=0) + F.log_softmax(x, dim=-1), [(3, 4)]),
    Case("attention", lambda q, k, v: apply(Attention(0.35, False), q, k, v) + apply(Attention(0.3, True), q, k, v), [(2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8)]),
    Case("attention_3d_longer_keys", lambda q, k, v: apply(Attention(0.35, False), q, k, v), [(3, 4, 8), (3, 6, 8), (3, 6, 5)]),
    Case("layer_norm", lambda x: F.layer_norm(x, (5,), W["ln_w"], W["ln_b"]), [(2, 3, 5)]),
    Case("group_norm", lambda x: F.group_norm(x, 2), [(2, 4, 3, 3)]),
    Case("losses", lambda x, y: F.mse_loss(x, y) + F.cross_entropy(x, IDX[:, 0]) + F.binary_cross_entropy(x.sigmoid(), y.sigmoid()), [(3, 4), (3, 4)]),
    Case("normalize_cosine", lambda x, y: F.normalize(x, dim=1).sum(0) + F.cosine_similarity(x, y).sum(), [(3, 4), (3, 4)]),
    # unknown (dynamic) sizes
    Case("dyn_mean_softmax", lambda x: F.softmax(x - x.mean(), 1), [(4, 3)], dynamic={0: [0]}, more=[(7, 3)]),
    Case("dyn_layer_norm", lambda x: F.layer_norm(x, (5,), W["ln_w"], W["ln_b"]), [(4, 2, 5)], dynamic={0: [0, 1]}, more=[(7, 3, 5)]),
    Case("dyn_repeat_expand", lambda x: x.repeat(2, 1).sum(0) + x.unsqueeze(0).expand(2, -1, -1).sum((0, 1)), [(4, 3)], dynamic={0: [0]}, more=[(1, 3)]),
    Case("dyn_flatten_cat_flip", lambda x: ember.cat([x, x.flip(0).roll(1, 0)]).flatten(), [(4, 3)], dynamic={0: [0]}, more=[(6, 3)]),
    Case("dyn_conv_transpose", lambda x: F.conv_transpose2d(x, W["convt"], stride=2), [(2, 3, 4, 4)], dynamic={0: [0]}, more=[(5, 3, 4, 4)]),
    Case("dyn_adaptive_pool", lambda x: F.adaptive_avg_pool2d(x, 1).flatten(1), [(2, 3, 4, 4)], dynamic={0: [0]}, more=[(5, 3, 4, 4)]),
]
# fmt: on


def _arrays(case, shapes=None, seed=0):
    rng = np.random.default_rng(seed)
    if shapes is None and callable(case.shapes):
        return [np.asarray(a) for a in case.shapes(rng)]
    return [rng.standard_normal(s).astype(np.float32) for s in (shapes or case.shapes)]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_op(case):
    args = tuple(ember.tensor(a) for a in _arrays(case))
    names = [f"in{i}" for i in range(len(args))]
    dynamic = {names[i]: axes for i, axes in case.dynamic.items()}
    _, data = check(
        case.fn,
        args,
        atol=case.atol,
        input_names=names,
        opset_version=case.opset,
        dynamic_axes=dynamic or None,
    )
    if case.more:
        from tests.onnx.helpers import assert_matches, run

        other = tuple(ember.tensor(a) for a in _arrays(case, case.more, seed=1))
        with ember.no_grad():
            want = case.fn(*other)
        assert_matches(run(data, dict(zip(names, other))), want)


@pytest.mark.parametrize("opset", [13, 18])
def test_opsets(opset):
    """Reductions take axes as an attribute before opset 18 and as an input from 18 on."""
    fn = lambda x: x.amax(1) + x.logsumexp(0).sum() + x.prod(1) + x.sum(0).max()  # noqa: E731
    proto, _ = check(fn, (ember.randn(3, 4),), opset_version=opset)
    assert proto.opset_import[0].version == opset
