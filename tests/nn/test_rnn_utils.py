"""ember.nn.utils.rnn against torch.nn.utils.rnn: packed data, batch sizes, sorted and unsorted
indices, padded outputs and lengths, the gradients that flow back through them, round trips."""

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import ember
from ember.nn.utils import rnn

LENGTH_CASES = [
    ([4, 3, 3, 1], True),  # sorted, with a tie
    ([4, 3, 3, 1], False),
    ([2, 5, 5, 3, 1], False),  # unsorted, ties kept in input order
    ([1, 1, 1], False),
    ([3], True),
]


def _e(a, device, grad=False):
    return ember.tensor(a, device=device, requires_grad=grad)


def _t(a, grad=False):
    return torch.tensor(a, requires_grad=grad)


def _eq(e, t, **kw):
    assert e is not None and t is not None
    got = e.detach().cpu().numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    np.testing.assert_allclose(got, t.detach().numpy(), **kw)


def _same_packed(e, t):
    assert isinstance(e, rnn.PackedSequence)
    _eq(e.data, t.data)
    assert e.batch_sizes.device.type == "cpu" and e.batch_sizes.dtype == ember.int64
    _eq(e.batch_sizes, t.batch_sizes)
    for name in ("sorted_indices", "unsorted_indices"):
        ei, ti = getattr(e, name), getattr(t, name)
        assert (ei is None) == (ti is None), name
        if ei is not None:
            assert ei.device == e.data.device and ei.dtype == ember.int64
            _eq(ei, ti)


@pytest.mark.parametrize("lengths,enforce_sorted", LENGTH_CASES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)])
def test_pack_padded_sequence_matches_torch(device, lengths, enforce_sorted, batch_first, trailing):
    rng = np.random.default_rng(0)
    steps, batch = max(lengths) + 1, len(lengths)
    shape = ((batch, steps) if batch_first else (steps, batch)) + trailing
    x = rng.standard_normal(shape)
    te, ee = _t(x, True), _e(x, device, True)
    for as_tensor in (False, True):
        e_len = ember.tensor(lengths) if as_tensor else lengths
        t_len = torch.tensor(lengths) if as_tensor else lengths
        tp = trnn.pack_padded_sequence(te, t_len, batch_first, enforce_sorted)
        ep = rnn.pack_padded_sequence(ee, e_len, batch_first, enforce_sorted)
        _same_packed(ep, tp)
        assert ep.data.device.type == device
    # gradient back to the padded input (zero at the padding)
    w = rng.standard_normal(tuple(tp.data.shape))
    (tp.data * _t(w)).sum().backward()
    (ep.data * _e(w, device)).sum().backward()
    _eq(ee.grad, te.grad)
    # and back again
    for total in (None, steps + 2):
        for pad in (0.0, -7.5):
            tpad, tlen = trnn.pad_packed_sequence(tp, batch_first, pad, total)
            epad, elen = rnn.pad_packed_sequence(ep, batch_first, pad, total)
            _eq(epad, tpad)
            _eq(elen, tlen)
            assert elen.device.type == "cpu" and elen.dtype == ember.int64
            assert epad.device.type == device


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("padding_value", [0.0, 2.5])
@pytest.mark.parametrize("trailing", [(), (2, 3)])
def test_pad_sequence_matches_torch(device, batch_first, padding_side, padding_value, trailing):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, *trailing)) for n in (3, 5, 0, 1)]
    ts = [_t(a, True) for a in arrays]
    es = [_e(a, device, True) for a in arrays]
    tout = trnn.pad_sequence(ts, batch_first, padding_value, padding_side)
    eout = rnn.pad_sequence(es, batch_first, padding_value, padding_side)
    assert eout.device.type == device
    _eq(eout, tout)
    w = rng.standard_normal(tuple(tout.shape))
    (tout * _t(w)).sum().backward()
    (eout * _e(w, device)).sum().backward()
    for e, t in zip(es, ts):
        _eq(e.grad, t.grad)


def test_pad_sequence_dtypes_and_tensor_input(device):
    seqs = [np.array([1, 2, 3]), np.array([4])]
    got = rnn.pad_sequence([_e(s, device) for s in seqs], batch_first=True, padding_value=-1)
    want = trnn.pad_sequence([_t(s) for s in seqs], batch_first=True, padding_value=-1)
    assert got.dtype == ember.int64
    _eq(got, want)
    # mixed dtypes: the first sequence's dtype wins
    mixed = [np.array([1.5, 2.5]), np.array([3])]
    got = rnn.pad_sequence([_e(s, device) for s in mixed])
    want = trnn.pad_sequence([_t(s) for s in mixed])
    assert got.dtype == ember.float64
    _eq(got, want)
    # a tensor is unbound along its first dimension
    x = np.arange(6.0).reshape(3, 2)
    _eq(rnn.pad_sequence(_e(x, device)), trnn.pad_sequence(_t(x)))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_round_trip(device, enforce_sorted):
    rng = np.random.default_rng(2)
    lengths = [5, 3, 3, 2] if enforce_sorted else [2, 5, 3, 3]
    arrays = [rng.standard_normal((n, 4)) for n in lengths]
    ts = [_t(a, True) for a in arrays]
    es = [_e(a, device, True) for a in arrays]
    tp = trnn.pack_sequence(ts, enforce_sorted)
    ep = rnn.pack_sequence(es, enforce_sorted)
    _same_packed(ep, tp)
    back = rnn.unpack_sequence(ep)
    assert len(back) == len(arrays)
    for e, a, t in zip(back, arrays, trnn.unpack_sequence(tp)):
        assert e.device.type == device
        _eq(e, t)
        np.testing.assert_array_equal(e.detach().cpu().numpy(), a)
    w = rng.standard_normal(tuple(tp.data.shape))
    (tp.data * _t(w)).sum().backward()
    (ep.data * _e(w, device)).sum().backward()
    for e, t in zip(es, ts):
        _eq(e.grad, t.grad)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_matches_torch_and_leaves_input(device, batch_first):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((n, 2)) for n in (4, 1, 3)]
    lengths = [4, 1, 3]
    padded = trnn.pad_sequence([_t(a) for a in arrays], batch_first)
    epadded = _e(padded.numpy(), device)
    want = trnn.unpad_sequence(padded.clone(), torch.tensor(lengths), batch_first)
    for lens in (lengths, ember.tensor(lengths)):
        got = rnn.unpad_sequence(epadded, lens, batch_first)
        assert tuple(epadded.shape) == tuple(padded.shape)  # not transposed in place
        assert len(got) == len(want)
        for e, t in zip(got, want):
            assert e.device.type == device
            _eq(e, t)


def test_gradcheck_through_pack_and_pad(device):
    lengths = [3, 1, 2]
    x = ember.randn(3, 3, 2, dtype=ember.float64, device=device, requires_grad=True)

    def fn(x):
        packed = rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        padded, _ = rnn.pad_packed_sequence(packed, batch_first=True, padding_value=1.0)
        return padded * padded

    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))
    seqs = [
        ember.randn(n, 2, dtype=ember.float64, device=device, requires_grad=True) for n in (2, 4)
    ]
    assert ember.autograd.gradcheck(
        lambda a, b: rnn.pad_sequence([a, b], padding_side="left"), seqs
    )


def test_packed_sequence_methods(device):
    data = ember.arange(6.0).reshape(3, 2)
    p = rnn.PackedSequence(data, ember.tensor([2, 1]), ember.tensor([1, 0]))
    _eq(p.unsorted_indices, torch.tensor([1, 0]))
    t = trnn.PackedSequence(
        torch.arange(6.0).reshape(3, 2), torch.tensor([2, 1]), torch.tensor([1, 0])
    )
    assert tuple(t._fields) == tuple(p._fields)
    q = rnn.PackedSequence((data, ember.tensor([2, 1])))
    assert q.sorted_indices is None and q.unsorted_indices is None
    moved = p.to(device)
    assert moved.data.device.type == device and moved.sorted_indices.device.type == device
    assert moved.unsorted_indices.device.type == device
    assert moved.batch_sizes.device.type == "cpu"
    assert moved.is_cuda == (device == "cuda")
    assert p.to("cpu") is p
    assert moved.double().data.dtype == ember.float64 and moved.long().data.dtype == ember.int64
    assert moved.cpu().data.device.type == "cpu" and not moved.is_pinned()
    data, batch_sizes, sorted_indices, unsorted_indices = moved  # a named tuple
    assert batch_sizes is moved.batch_sizes
    if device == "cuda":
        with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
            rnn.PackedSequence(moved.data, ember.tensor([2, 1], device=device))
    with pytest.raises(TypeError, match="Expected data to be a list or tuple of length 2"):
        rnn.PackedSequence(data)


def test_invert_permutation(device):
    perm = np.array([3, 0, 2, 4, 1])
    got = rnn.invert_permutation(_e(perm, device))
    assert got.device.type == device
    np.testing.assert_array_equal(got.cpu().numpy(), np.argsort(perm))
    assert rnn.invert_permutation(None) is None


def test_errors(device):
    x = ember.randn(4, 3, 2, device=device)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [1, 3, 2])
    with pytest.raises(RuntimeError, match="has to be greater than 0.*lengths \\[4, 3, 0\\]"):
        rnn.pack_padded_sequence(x, [4, 3, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size"):
        rnn.pack_padded_sequence(x, [4, 3])
    with pytest.raises(RuntimeError, match="must not exceed the sequence length 4"):
        rnn.pack_padded_sequence(x, [5, 3, 1])
    with pytest.raises(RuntimeError, match=r"Cannot pack empty tensors \(input shape \(0, 3\)\)"):
        rnn.pack_padded_sequence(ember.zeros(0, 3, device=device), [1, 1, 1])
    with pytest.raises(RuntimeError, match="'lengths' should be a 1D int64 tensor"):
        rnn.pack_padded_sequence(x, ember.tensor([[4, 3, 1]]))
    packed = rnn.pack_padded_sequence(x, [4, 3, 1])
    with pytest.raises(ValueError, match="total_length=3 and max sequence length being 4"):
        rnn.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(TypeError, match="pad_packed_sequence: expected a PackedSequence"):
        rnn.pad_packed_sequence(x)
    with pytest.raises(ValueError, match="received an empty list of sequences"):
        rnn.pad_sequence([])
    with pytest.raises(ValueError, match="padding_side to be one of left or right, but got mid"):
        rnn.pad_sequence([x], padding_side="mid")
    with pytest.raises(RuntimeError, match=r"same trailing dimensions.*\(2, 3\).*\(3, 2\)"):
        rnn.pad_sequence([ember.ones(2, 3), ember.ones(3, 2)])
    with pytest.raises(TypeError, match="Expected iterable for input sequences"):
        rnn.pad_sequence(3)
    with pytest.raises(RuntimeError, match="unpad_sequence: got 2 lengths for a batch of 3"):
        rnn.unpad_sequence(x, [4, 3])
