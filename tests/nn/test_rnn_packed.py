"""nn.RNN / LSTM / GRU on PackedSequence input, against torch with copied weights."""

import numpy as np
import pytest

import ember
from ember.nn.utils import rnn as eru

torch = pytest.importorskip("torch")
tru = torch.nn.utils.rnn

LENGTHS = [3, 5, 1, 4]


def _pair(kind, **kw):
    torch.manual_seed(0)
    t = getattr(torch.nn, kind)(3, 4, **kw).double()
    e = getattr(ember.nn, kind)(3, 4, **kw).double()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True}, {"proj_size": 2}],
    ids=["plain", "2layer-bidir", "batch_first", "proj"],
)
@pytest.mark.parametrize("enforce_sorted", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_packed_matches_torch(device, kind, kw, enforce_sorted, with_state):
    if "proj_size" in kw and kind != "LSTM":
        pytest.skip("proj_size is LSTM-only")
    t_mod, e_mod = _pair(kind, **kw)
    e_mod.to(device)
    lengths = sorted(LENGTHS, reverse=True) if enforce_sorted else LENGTHS
    rng = np.random.default_rng(1)
    x = rng.standard_normal((max(lengths), len(lengths), 3))
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, device=device, requires_grad=True)
    bf = kw.get("batch_first", False)
    t_in = tru.pack_padded_sequence(tx.transpose(0, 1) if bf else tx, lengths, bf, enforce_sorted)
    e_in = eru.pack_padded_sequence(ex.transpose(0, 1) if bf else ex, lengths, bf, enforce_sorted)
    t_args, e_args = [t_in], [e_in]
    if with_state:
        layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        h = rng.standard_normal((layers, len(lengths), kw.get("proj_size") or 4))
        c = rng.standard_normal((layers, len(lengths), 4))
        if kind == "LSTM":
            t_args.append((torch.tensor(h), torch.tensor(c)))
            e_args.append((ember.tensor(h, device=device), ember.tensor(c, device=device)))
        else:
            t_args.append(torch.tensor(h))
            e_args.append(ember.tensor(h, device=device))
    t_out, t_state = t_mod(*t_args)
    e_out, e_state = e_mod(*e_args)
    assert isinstance(e_out, eru.PackedSequence)
    np.testing.assert_allclose(
        e_out.data.detach().cpu().numpy(), t_out.data.detach().numpy(), atol=1e-10
    )
    assert e_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    t_states = t_state if kind == "LSTM" else (t_state,)
    e_states = e_state if kind == "LSTM" else (e_state,)
    for es, ts in zip(e_states, t_states):
        np.testing.assert_allclose(es.detach().cpu().numpy(), ts.detach().numpy(), atol=1e-10)
    t_pad, _ = tru.pad_packed_sequence(t_out)
    e_pad, _ = eru.pad_packed_sequence(e_out)
    (t_pad.sum() + t_states[0].sum()).backward()
    (e_pad.sum() + e_states[0].sum()).backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-10)
    for (name, tp), ep in zip(t_mod.named_parameters(), e_mod.parameters()):
        np.testing.assert_allclose(ep.grad.cpu().numpy(), tp.grad.numpy(), atol=1e-9, err_msg=name)


def test_packed_input_size_and_state_errors():
    lstm = ember.nn.LSTM(3, 4)
    bad = eru.pack_sequence([ember.ones(2, 5), ember.ones(1, 5)])
    with pytest.raises(
        ember.ShapeError, match=r"packed input.size\(-1\) must be equal to input_size"
    ):
        lstm(bad)
    good = eru.pack_sequence([ember.ones(2, 3), ember.ones(1, 3)])
    with pytest.raises(ember.EmberError, match="Expected hidden"):
        lstm(good, (ember.zeros(1, 3, 4), ember.zeros(1, 3, 4)))
