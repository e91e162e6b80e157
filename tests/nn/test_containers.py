"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict against torch.nn."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember import nn

from ._models import make

LIBS = {"ember": (ember, *make(ember)), "torch": (torch, *make(torch))}


@pytest.fixture(params=["ember", "torch"])
def lib(request):
    return LIBS[request.param]


def _names(pairs):
    return [n for n, _ in pairs]


def _both(build):
    """``build(lib, Affine, Tanh, Net)`` for ember and torch."""
    return build(*LIBS["ember"]), build(*LIBS["torch"])


# -- Sequential ---------------------------------------------------------------------------------
def test_sequential_forward_and_structure():
    e, t = _both(lambda lib, A, T, N: lib.nn.Sequential(A(3, 4), T(), A(4, 2)))
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(
        e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-6
    )
    assert repr(e) == repr(t)
    assert (
        list(e.state_dict())
        == list(t.state_dict())
        == ["0.weight", "0.bias", "0.calls", "2.weight", "2.bias", "2.calls"]
    )
    assert len(e) == 3 and [type(m).__name__ for m in e] == ["Affine", "Tanh", "Affine"]


def test_sequential_from_ordered_dict():
    e, t = _both(
        lambda lib, A, T, N: lib.nn.Sequential(OrderedDict([("fc", A(2, 2)), ("act", T())]))
    )
    assert repr(e) == repr(t)
    assert _names(e.named_modules()) == _names(t.named_modules()) == ["", "fc", "act"]
    assert e.fc is e[0] and e.act is e[-1]


def test_sequential_indexing(lib):
    lib_, A, T, _ = lib
    mods = [A(1, 1), T(), A(1, 1), T()]
    s = lib_.nn.Sequential(*mods)
    assert s[0] is mods[0] and s[-1] is mods[3] and s[-4] is mods[0]
    sub = s[1:3]
    assert type(sub) is lib_.nn.Sequential and list(sub) == mods[1:3]
    assert _names(sub.named_children()) == ["1", "2"]  # a slice keeps the names
    assert list(s[::-1]) == mods[::-1]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        s[4]
    with pytest.raises(IndexError, match="index -5 is out of range"):
        s[-5]
    new = T()
    s[1] = new
    assert s[1] is new


def test_sequential_mutation_matches_torch():
    def build(lib, A, T, N):
        s = lib.nn.Sequential(A(1, 1), T(), A(1, 2))
        s.append(T())
        s.insert(1, A(1, 3))
        s.insert(-1, T())
        s.extend([A(2, 2)])
        del s[0]
        popped = s.pop(-1)
        del s[1:3]
        s2 = s + lib.nn.Sequential(A(5, 5))
        s3 = lib.nn.Sequential(T()) * 2
        s += lib.nn.Sequential(A(6, 6))
        return [repr(x) for x in (s, s2, s3, popped)] + [_names(s.named_children())]

    e, t = _both(build)
    assert e == t


def test_sequential_errors():
    s = nn.Sequential(nn.Module())
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        s + nn.ModuleList()
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        s * 0
    with pytest.raises(TypeError, match="unsupported operand"):
        s * 1.5
    with pytest.raises(IndexError, match="Index out of range: 5"):
        s.insert(5, nn.Module())


def test_sequential_dir_hides_indices():
    s = nn.Sequential(nn.Module())
    assert "0" not in dir(s) and "append" in dir(s)


# -- ModuleList -----------------------------------------------------------------------------------
def test_module_list_ops_match_torch():
    def build(lib, A, T, N):
        ml = lib.nn.ModuleList([A(1, 1), T()])
        ml.append(A(2, 2))
        ml.extend([T(), T()])
        ml += [A(3, 3)]
        ml.insert(0, T())
        out = [len(ml), repr(ml), repr(ml[1:4]), type(ml[1:4]).__name__, repr(ml[-1])]
        del ml[0]
        popped = ml.pop(1)
        ml[0] = T()
        combined = ml + lib.nn.ModuleList([A(4, 4)])
        del ml[::2]
        out += [repr(popped), repr(ml), repr(combined), _names(combined.named_parameters())]
        return out

    e, t = _both(build)
    assert e == t


def test_module_list_repr_compresses_repeats():
    e, t = _both(lambda lib, A, T, N: lib.nn.ModuleList([A(2, 2)] * 3 + [T(), A(2, 2)]))
    assert repr(e) == repr(t)
    assert "(0-2): 3 x Affine(in_features=2, out_features=2)" in repr(e)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList()) == "ModuleList()"


def test_module_list_parameters_and_errors():
    e, t = _both(lambda lib, A, T, N: lib.nn.ModuleList([A(1, 2), A(2, 3)]))
    assert _names(e.named_parameters()) == _names(t.named_parameters())
    with pytest.raises(IndexError, match="index 2 is out of range"):
        e[2]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        e.extend(3)
    assert [type(m).__name__ for m in e] == ["Affine", "Affine"]
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        e(ember.ones(1))


# -- ModuleDict ------------------------------------------------------------------------------
def test_module_dict_matches_torch():
    def build(lib, A, T, N):
        md = lib.nn.ModuleDict({"b": A(1, 1), "a": T()})
        md["c"] = A(2, 2)
        md.update([("d", T())])
        md.update(OrderedDict(e=A(3, 3)))
        out = [
            list(md),
            list(md.keys()),
            "a" in md,
            len(md),
            repr(md),
            _names(md.named_parameters()),
            [type(v).__name__ for v in md.values()],
        ]
        popped = md.pop("a")
        del md["d"]
        out += [repr(popped), list(md), [k for k, _ in md.items()]]
        md.clear()
        out.append(len(md))
        return out

    e, t = _both(build)
    assert e == t


def test_module_dict_errors(lib):
    lib_, A, T, _ = lib
    md = lib_.nn.ModuleDict()
    with pytest.raises(TypeError, match="ModuleDict.update should be called with an iterable"):
        md.update(3)
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("a",)])
    with pytest.raises(KeyError):
        md["missing"]


# -- ParameterList / ParameterDict ------------------------------------------------------------
def test_parameter_list_matches_torch():
    def build(lib, A, T, N):
        pl = lib.nn.ParameterList([lib.ones(2, 3), lib.nn.Parameter(lib.zeros(4))])
        pl.append(lib.zeros(1, dtype=lib.float64))
        pl.extend([lib.ones(5)])
        pl[0] = lib.full((2, 3), 2.0)
        sub = pl[1:3]
        return [
            len(pl),
            repr(pl).replace("torch.", "ember."),
            list(pl.state_dict()),
            _names(pl.named_parameters()),
            [type(p).__name__ for p in pl],
            len(sub),
            [tuple(p.shape) for p in sub],
            pl[-1].requires_grad,
        ]

    e, t = _both(build)
    assert e == t


def test_parameter_list_holds_other_objects_and_refuses_calls():
    pl = nn.ParameterList([nn.Parameter(ember.ones(1)), "text"])
    assert pl[1] == "text" and len(list(pl.parameters())) == 1
    assert "(1): Object of type: str" in repr(pl)
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl()
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        pl.extend(ember.ones(2))


def test_parameter_list_is_updated_by_optimizer_and_to():
    pl = nn.ParameterList([ember.ones(2)])
    p = pl[0]
    pl.double()
    assert pl[0] is p and p.dtype == ember.float64


def test_parameter_dict_matches_torch():
    def build(lib, A, T, N):
        pd = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.nn.Parameter(lib.zeros(1))})
        pd["c"] = lib.ones(1, 2)
        pd.update(OrderedDict(z=lib.zeros(3)))
        out = [
            list(pd),
            len(pd),
            "a" in pd,
            repr(pd).replace("torch.", "ember."),
            list(pd.state_dict()),
            [type(v).__name__ for v in pd.values()],
            pd.get("nope", "default"),
            list(reversed(pd)),
        ]
        popped = pd.pop("b")
        k, _ = pd.popitem()
        pd.setdefault("d", lib.ones(1))
        merged = pd | lib.nn.ParameterDict({"q": lib.ones(1)})
        out += [
            popped.shape == (2,),
            k,
            list(pd),
            list(merged),
            list(pd.copy()),
            list(pd.fromkeys(["x", "y"])),
        ]
        pd.clear()
        out.append(len(pd))
        return out

    e, t = _both(build)
    assert e == t


def test_parameter_dict_errors():
    pd = nn.ParameterDict()
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = ember.ones(1)
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        pd(1)


def test_nested_containers_state_dict_and_repr_match_torch():
    def build(lib, A, T, N):
        net = lib.nn.Sequential(
            lib.nn.ModuleDict({"enc": lib.nn.ModuleList([A(2, 3), T()]), "net": N()}),
            lib.nn.Sequential(A(3, 1)),
        )
        net[0].extra = lib.nn.ParameterList([lib.ones(2)])
        return [
            repr(net).replace("torch.", "ember."),
            list(net.state_dict()),
            _names(net.named_modules()),
            _names(net.named_parameters()),
            _names(net.named_buffers()),
        ]

    e, t = _both(build)
    assert e == t
