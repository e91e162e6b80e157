"""ember.nn.Module and Parameter against torch.nn on the same small modules."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember import nn

from ._models import make

EAffine, ETanh, ENet = make(ember)
TAffine, TTanh, TNet = make(torch)


def _randomize(enet, tnet):
    """Give both nets the same random parameter values."""
    rng = np.random.default_rng(1)
    for (en, ep), (tn, tp) in zip(enet.named_parameters(), tnet.named_parameters()):
        assert en == tn
        value = rng.standard_normal(tuple(tp.shape)).astype(np.float32)
        with torch.no_grad():
            tp.copy_(torch.from_numpy(value))
        ep.data = ember.tensor(value)


# -- Parameter -------------------------------------------------------------------------------
def test_parameter_shares_data_and_is_a_leaf():
    t = ember.zeros(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.is_leaf and p.requires_grad and not t.requires_grad
    assert p.numpy(force=True) is t.numpy()
    t.add_(1)
    assert p.detach().tolist() == [[1.0] * 3] * 2
    assert p._version is t._version  # in-place writes are seen by both


def test_parameter_repr_matches_torch():
    e = nn.Parameter(ember.tensor([1.0, 2.0]))
    t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(e) == repr(t) == str(e)
    e2 = nn.Parameter(ember.tensor([1.0, 2.0]), requires_grad=False)
    t2 = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)
    assert repr(e2) == repr(t2)


def test_ops_on_parameters_return_plain_tensors():
    p = nn.Parameter(ember.ones(2))
    for out in (p * 2, p + p, ember.tanh(p), p.sum(), p.detach(), p.data):
        assert type(out) is ember.Tensor


def test_parameter_defaults_and_errors():
    p = nn.Parameter()
    assert p.shape == (0,) and p.requires_grad
    with pytest.raises(ember.DTypeError, match="floating point"):
        nn.Parameter(ember.tensor([1, 2]))
    q = nn.Parameter(ember.tensor([1, 2]), requires_grad=False)
    assert q.dtype == ember.int64
    with pytest.raises(TypeError, match="expected a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_parameter_from_non_leaf_is_a_leaf():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.grad_fn is None
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0] and x.grad is None


def test_parameter_gradient_accumulates():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    (p * p).sum().backward()
    assert p.grad.tolist() == [4.0, 8.0]


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    assert q.numpy(force=True) is not p.numpy(force=True)
    r = pickle.loads(pickle.dumps(nn.Parameter(ember.ones(2), requires_grad=False)))
    assert type(r) is nn.Parameter and not r.requires_grad


# -- registration ----------------------------------------------------------------------------
def test_registration_by_assignment():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(2))
    m.sub = nn.Module()
    m.register_buffer("buf", ember.zeros(1))
    m.plain = ember.zeros(1)  # a plain tensor is not registered
    m.x = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert list(m._buffers) == ["buf"]
    assert m.w is m._parameters["w"] and m.sub is m._modules["sub"] and m.buf is m._buffers["buf"]
    assert [n for n, _ in m.named_parameters()] == ["w"]
    assert [n for n, _ in m.named_buffers()] == ["buf"]


@pytest.mark.parametrize("lib", [ember, torch])
def test_reassign_between_kinds(lib):
    nnl = lib.nn
    m = nnl.Module()
    m.a = nnl.Module()
    m.a = nnl.Parameter(lib.ones(1))  # a module name becomes a parameter
    assert "a" not in m._modules and isinstance(m.a, nnl.Parameter)
    with pytest.raises(TypeError, match="as parameter 'a'"):
        m.a = nnl.Module()  # but a parameter name takes only Parameters or None
    m.register_buffer("b", lib.ones(1), persistent=False)
    m.b = lib.zeros(2)  # a tensor assigned to a buffer name replaces the buffer
    assert m._buffers["b"].shape == (2,) and "b" in m._non_persistent_buffers_set
    m.b = nnl.Parameter(lib.zeros(1))
    assert "b" not in m._buffers and "b" not in m._non_persistent_buffers_set
    m.register_buffer("c", lib.ones(1))
    m.c = nnl.Module()
    assert "c" not in m._buffers and isinstance(m.c, nnl.Module)
    with pytest.raises(TypeError, match="as child module 'c'"):
        m.c = lib.ones(1)
    m.x = 5
    m.x = nnl.Module()  # a plain attribute becomes a module
    assert "x" in m._modules and isinstance(m.x, nnl.Module)


def test_assign_none():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(1))
    m.w = None
    assert m.w is None and "w" in m._parameters
    assert list(m.parameters()) == [] and list(m.state_dict()) == []
    m.sub = nn.Module()
    m.sub = None
    assert m.sub is None and list(m.children()) == []
    m.register_buffer("b", None)
    assert m.b is None and list(m.buffers()) == []


def test_buffer_class():
    m = nn.Module()
    b = nn.Buffer(ember.zeros(2), persistent=False)
    m.b = b
    assert m.b is b and "b" in m._non_persistent_buffers_set
    m.c = nn.Buffer(ember.ones(1))
    assert list(m.state_dict()) == ["c"]
    assert repr(m.c) == "tensor([1.])"
    m2 = copy.deepcopy(m)
    assert m2.c.tolist() == [1.0] and m2.c.numpy() is not m.c.numpy() and m2.c.persistent
    assert "b" in m2._non_persistent_buffers_set


@pytest.mark.parametrize("lib", [ember, torch])
def test_registration_errors(lib):
    nnl = lib.nn
    m = nnl.Module()
    m.w = nnl.Parameter(lib.ones(1))
    with pytest.raises(
        TypeError, match=r"cannot assign 'int' as parameter 'w' \(.*nn.Parameter or None expected\)"
    ):
        m.w = 3
    with pytest.raises(TypeError, match=r"as parameter 'w'"):
        m.w = lib.ones(1)  # a plain tensor is not a Parameter
    m.sub = nnl.Module()
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'sub'"):
        m.sub = 1
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", lib.ones(1))
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.register_parameter("forward", None)
    with pytest.raises(KeyError, match=r"parameter name can.*t contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match=r"buffer name can.*t be empty string"):
        m.register_buffer("", None)
    with pytest.raises(KeyError, match=r"module name can.*t contain .*got: a.b"):
        m.add_module("a.b", nnl.Module())
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to buffer 'z'"):
        m.register_buffer("z", 3)
    with pytest.raises(TypeError, match=r"parameter name should be a string. Got int"):
        m.register_parameter(1, None)
    with pytest.raises(AttributeError, match="object has no attribute 'nope'"):
        _ = m.nope


def test_non_leaf_parameter_rejected():
    m = nn.Module()
    x = nn.Parameter(ember.ones(1))
    y = x * 2
    y.__class__ = nn.Parameter  # a Parameter with history (what PyTorch also refuses)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
        m.register_parameter("p", y)


def test_assign_before_init():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__"):
        Bad()

    class Bad2(nn.Module):
        def __init__(self):
            self.m = nn.Module()

    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__"):
        Bad2()


def test_init_rejects_arguments():
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)


def test_delattr():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(1))
    m.register_buffer("b", ember.ones(1), persistent=False)
    m.sub = nn.Module()
    m.x = 1
    for name in ("w", "b", "sub", "x"):
        delattr(m, name)
        assert not hasattr(m, name)
    assert not m._parameters and not m._buffers and not m._modules
    assert not m._non_persistent_buffers_set


def test_registries_stay_in_step_with_attributes():
    m = nn.Module()
    p1, p2 = nn.Parameter(ember.ones(1)), nn.Parameter(ember.zeros(1))
    m._parameters["w"] = p1  # direct edits of the registries (PyTorch code does this)
    assert m.w is p1
    m._parameters.update(w=p2)
    assert m.w is p2
    m._parameters.pop("w")
    assert not hasattr(m, "w")
    m._modules["a"] = nn.Module()
    m._modules.setdefault("b", nn.Module())
    assert isinstance(m.b, nn.Module)
    m._modules.clear()
    assert not hasattr(m, "a") and not hasattr(m, "b")
    m.c = nn.Module()
    m._modules = OrderedDict([("d", nn.Module())])  # a registry replaced wholesale
    assert not hasattr(m, "c") and isinstance(m.d, nn.Module)
    m._modules["e"] = nn.Module()
    assert isinstance(m.e, nn.Module)


def test_dir_lists_registered_names():
    m = ENet()
    d = dir(m)
    for name in ("scale", "steps", "fc1", "blocks", "forward", "training"):
        assert name in d
    assert d == sorted(set(d))
    assert set(dir(TNet())) - set(dir(m)) <= {
        "_backward_hooks",
        "_backward_pre_hooks",
        "_is_full_backward_hook",
    } | set(dir(torch.nn.Module))


def test_forward_missing():
    with pytest.raises(
        NotImplementedError, match=r'Module \[Module\] is missing the required "forward"'
    ):
        nn.Module()(ember.ones(1))


# -- iteration against torch ----------------------------------------------------------------
def _names(pairs):
    return [n for n, _ in pairs]


def test_named_members_match_torch():
    e, t = ENet(), TNet()
    assert _names(e.named_parameters()) == _names(t.named_parameters())
    assert _names(e.named_parameters(prefix="net")) == _names(t.named_parameters(prefix="net"))
    assert _names(e.named_parameters(recurse=False)) == _names(t.named_parameters(recurse=False))
    assert _names(e.named_parameters(remove_duplicate=False)) == _names(
        t.named_parameters(remove_duplicate=False)
    )
    assert _names(e.named_buffers()) == _names(t.named_buffers())
    assert _names(e.named_buffers(prefix="p", recurse=False)) == _names(
        t.named_buffers(prefix="p", recurse=False)
    )
    assert _names(e.named_children()) == _names(t.named_children())
    assert _names(e.named_modules()) == _names(t.named_modules())
    assert _names(e.named_modules(prefix="root")) == _names(t.named_modules(prefix="root"))
    assert _names(e.named_modules(remove_duplicate=False)) == _names(
        t.named_modules(remove_duplicate=False)
    )
    assert len(list(e.parameters())) == len(list(t.parameters()))
    assert len(list(e.modules())) == len(list(t.modules()))
    assert len(list(e.children())) == len(list(t.children()))
    assert len(list(e.buffers())) == len(list(t.buffers()))


def test_shared_parameter_listed_once():
    m = nn.Module()
    m.a, m.b = nn.Module(), nn.Module()
    p = nn.Parameter(ember.ones(1))
    m.a.w = p
    m.b.w = p
    assert _names(m.named_parameters()) == ["a.w"]
    assert _names(m.named_parameters(remove_duplicate=False)) == ["a.w", "b.w"]
    assert list(m.state_dict()) == ["a.w", "b.w"]


# -- state_dict ------------------------------------------------------------------------------
def test_state_dict_keys_and_order_match_torch():
    e, t = ENet(), TNet()
    assert list(e.state_dict()) == list(t.state_dict())
    assert list(e.state_dict(prefix="model.")) == list(t.state_dict(prefix="model."))
    assert list(e.state_dict()._metadata) == list(t.state_dict()._metadata)
    assert type(e.state_dict()) is OrderedDict


def test_state_dict_values_share_storage_and_are_detached():
    e = ENet()
    sd = e.state_dict()
    w = sd["fc1.weight"]
    assert type(w) is ember.Tensor and not w.requires_grad
    with ember.no_grad():
        e.fc1.weight.mul_(0).add_(7)
    assert w.tolist()[0][0] == 7.0
    kv = e.state_dict(keep_vars=True)
    assert kv["fc1.weight"] is e.fc1.weight and kv["steps"] is e.steps


def test_state_dict_destination_and_hooks():
    e = EAffine(2, 2)
    dest = OrderedDict()
    assert e.state_dict(destination=dest) is dest and list(dest) == ["weight", "bias", "calls"]
    seen = []
    e.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(prefix))

    def drop_calls(m, sd, prefix, meta):
        del sd[prefix + "calls"]

    h = e.register_state_dict_post_hook(drop_calls)
    assert list(e.state_dict(prefix="x.")) == ["x.weight", "x.bias"] and seen == ["x."]
    h.remove()
    assert "calls" in e.state_dict()
    e.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        e.state_dict()


def test_load_state_dict_from_torch():
    e, t = ENet(), TNet()
    _randomize(ENet(), t)
    params_before = list(e.parameters())
    result = e.load_state_dict(t.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert list(e.parameters()) == params_before  # copied into the same Parameters
    for (name, ev), (_, tv) in zip(e.state_dict().items(), t.state_dict().items()):
        np.testing.assert_array_equal(ev.numpy(), tv.numpy(), err_msg=name)
        assert str(ev.dtype).split(".")[1] == str(tv.dtype).split(".")[1]
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        e(ember.tensor(x)).detach().numpy(),
        t(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_load_state_dict_numpy_arrays_cast_dtype():
    e = EAffine(2, 3)
    sd = {
        "weight": np.arange(6, dtype=np.float64).reshape(2, 3),
        "bias": np.ones(3),
        "calls": np.array(5, dtype=np.int32),
    }
    e.load_state_dict(sd)
    assert e.weight.dtype == ember.float32 and e.weight.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert e.calls.dtype == ember.int64 and e.calls.item() == 5
    assert e.weight.requires_grad and e.weight.is_leaf and e.weight._version_value > 0


def test_load_state_dict_torch_parameters_and_bfloat16():
    e, t = EAffine(2, 2), TAffine(2, 2)
    _randomize(e, t)
    e2 = EAffine(2, 2)
    e2.load_state_dict(t.state_dict(keep_vars=True))  # torch Parameters that require grad
    np.testing.assert_array_equal(e2.weight.numpy(force=True), t.weight.detach().numpy())
    sd = {
        k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in t.state_dict().items()
    }
    e2.load_state_dict(sd)
    assert e2.weight.dtype == ember.float32
    np.testing.assert_allclose(e2.weight.numpy(force=True), t.weight.detach().numpy(), rtol=1e-2)


def test_load_state_dict_zero_dim_from_one_element():
    e = nn.Module()
    e.s = nn.Parameter(ember.tensor(0.0))
    e.load_state_dict({"s": np.array([2.5])})
    assert e.s.shape == () and e.s.item() == 2.5


def _errors(lib, net, sd, **kw):
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd, **kw)
    return str(info.value).replace("torch.", "ember.")


def test_load_state_dict_strict_errors_match_torch():
    e, t = ENet(), TNet()
    sd_t = t.state_dict()
    del sd_t["fc1.bias"]
    sd_t["extra.weight"] = torch.zeros(1)
    sd_t["blocks.0.weight"] = torch.zeros(5, 4)
    sd_e = {k: v.numpy() for k, v in sd_t.items()}
    msg_e, msg_t = _errors(ember, e, sd_e), _errors(torch, t, sd_t)
    assert msg_e == msg_t
    assert msg_e.startswith(
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc1.bias". '
    )
    assert (
        "size mismatch for blocks.0.weight: copying a param with shape ember.Size([5, 4]) "
        "from checkpoint, the shape in current model is ember.Size([4, 4])."
    ) in msg_e
    assert 'Unexpected key(s) in state_dict: "extra.weight". ' in msg_e


def test_load_state_dict_non_strict_matches_torch():
    e, t = ENet(), TNet()
    sd_t = t.state_dict()
    del sd_t["head.fc.weight"]
    sd_t["head.fc.nope"] = torch.zeros(1)
    sd_t["nope"] = torch.zeros(1)
    re = e.load_state_dict(sd_t, strict=False)
    rt = t.load_state_dict(sd_t, strict=False)
    assert re.missing_keys == rt.missing_keys == ["head.fc.weight"]
    assert re.unexpected_keys == rt.unexpected_keys
    assert repr(re) == repr(rt)
    with pytest.raises(RuntimeError, match="size mismatch for scale"):  # even non-strict
        e.load_state_dict({"scale": np.zeros(3)}, strict=False)


def test_load_state_dict_bad_value_type():
    e = EAffine(1, 1)
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected'):
        e.load_state_dict({"weight": np.ones((1, 1)), "bias": "x", "calls": np.array(0)})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1, 2])


def test_load_state_dict_assign():
    e = EAffine(2, 2)
    w_old = e.weight
    new_w = ember.full((2, 2), 3.0, dtype=ember.float64)
    e.load_state_dict(
        {"weight": new_w, "bias": ember.zeros(2), "calls": ember.tensor(1)}, assign=True
    )
    assert e.weight is not w_old and isinstance(e.weight, nn.Parameter)
    assert e.weight.dtype == ember.float64 and e.weight.requires_grad
    assert e.weight.numpy(force=True) is new_w.numpy()


def test_load_state_dict_post_hook_and_round_trip():
    src, dst = ENet(), ENet()
    _randomize(src, TNet())
    seen = []
    dst.head.fc.register_load_state_dict_post_hook(
        lambda m, keys: seen.append(list(keys.missing_keys))
    )
    dst.load_state_dict(src.state_dict())
    assert seen == [[]]
    for (n, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)


def test_extra_state():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 0
            self.w = nn.Parameter(ember.ones(1))

        def get_extra_state(self):
            return {"counter": self.counter}

        def set_extra_state(self, state):
            self.counter = state["counter"]

    a, b = WithExtra(), WithExtra()
    a.counter = 9
    sd = a.state_dict()
    assert list(sd) == ["w", "_extra_state"]
    b.load_state_dict(sd)
    assert b.counter == 9
    with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
        b.load_state_dict({"w": np.ones(1)})


# -- hooks ----------------------------------------------------------------------------------
def _hook_log(lib, Affine):
    log = []
    m = Affine(2, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)

    def pre_kw(mod, args, kwargs):
        log.append(("pre_kw", len(args), sorted(kwargs)))

    m.register_forward_pre_hook(pre_kw, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("post", tuple(out.shape))))

    def post_kw(mod, args, kwargs, out):
        log.append("post_kw")
        return out * 0 + 1

    m.register_forward_hook(post_kw, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append("post0"), prepend=True)
    out = m(lib.ones(1, 2))
    h1.remove()
    m(lib.ones(1, 2))
    return log, out.detach().numpy().tolist()


def test_hook_order_matches_torch():
    assert _hook_log(ember, EAffine) == _hook_log(torch, TAffine)


@pytest.mark.parametrize("lib", [ember, torch])
def test_hooks_replace_inputs_and_outputs(lib):
    _, Tanh, _ = make(lib)
    m = Tanh()
    h = m.register_forward_pre_hook(lambda mod, args: args[0] * 0)  # a single value is wrapped
    assert m(lib.ones(2)).tolist() == [0.0, 0.0]
    h.remove()
    h = m.register_forward_pre_hook(
        lambda mod, args, kwargs: ((lib.zeros(1),), kwargs), with_kwargs=True
    )
    assert m(lib.ones(2)).tolist() == [0.0]
    h.remove()
    with m.register_forward_hook(lambda mod, args, out: out + 1):
        assert m(lib.zeros(1)).tolist() == [1.0]
    assert m(lib.zeros(1)).tolist() == [0.0]  # the handle removed the hook on exit


@pytest.mark.parametrize("lib", [ember, torch])
def test_always_call_hook_runs_on_error(lib):
    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    log = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(lib.ones(1))
    assert log == ["always"]


def test_bad_kwargs_pre_hook_result():
    m = ETanh()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(ember.ones(1))


# -- modes, grads, conversion ------------------------------------------------------------------
def test_train_eval_propagate_like_torch():
    e, t = ENet(), TNet()
    for mode in ("eval", "train"):
        assert getattr(e, mode)() is e
        getattr(t, mode)()
        assert [m.training for m in e.modules()] == [m.training for m in t.modules()]
    e.blocks.eval()
    t.blocks.eval()
    assert [m.training for m in e.modules()] == [m.training for m in t.modules()]
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        e.train(1)


def test_zero_grad():
    e = ENet()
    e(ember.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in e.parameters())
    grads = [p.grad for p in e.parameters()]
    e.zero_grad(set_to_none=False)
    for p, g in zip(e.parameters(), grads):
        assert p.grad is g and not g.requires_grad and not g.numpy().any()
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())


def test_requires_grad_and_apply():
    e = ENet()
    assert e.requires_grad_(False) is e
    assert not any(p.requires_grad for p in e.parameters())
    e.requires_grad_()
    assert all(p.requires_grad for p in e.parameters())
    visited_e, visited_t = [], []
    e.apply(lambda m: visited_e.append(type(m).__name__))
    TNet().apply(lambda m: visited_t.append(type(m).__name__))
    assert visited_e == visited_t


def test_to_dtype_keeps_parameter_objects():
    e = ENet()
    e(ember.ones(2, 3)).sum().backward()
    params = list(e.parameters())
    opt = ember.optim.SGD(e.parameters(), lr=0.1)
    assert e.to(ember.float64) is e
    assert list(e.parameters()) == params
    assert all(p.dtype == ember.float64 and p.grad.dtype == ember.float64 for p in params)
    assert e.fc1.calls.dtype == ember.int64  # integer buffers keep their dtype
    assert e.steps.dtype == ember.float64 and e.fc1.scratch.dtype == ember.float64
    before = e.scale.detach().clone()
    opt.step()  # the optimizer still updates the same (converted) Parameters
    assert e.scale.dtype == ember.float64 and not np.allclose(
        e.scale.numpy(force=True), before.numpy()
    )
    out = e(ember.ones(2, 3, dtype=ember.float64))
    assert out.dtype == ember.float64
    e.float()
    assert all(p.dtype == ember.float32 for p in e.parameters())
    e.half()
    assert e.scale.dtype == ember.float16 and e.fc1.calls.dtype == ember.int64
    e.double()
    assert e.scale.dtype == ember.float64
    e.to(ember.zeros(1))  # to(tensor): its dtype (and device)
    assert e.scale.dtype == ember.float32
    e.to("cpu", dtype=ember.float64)
    assert e.scale.dtype == ember.float64
    e.type(ember.float32)
    assert e.scale.dtype == ember.float32 and e.fc1.calls.dtype == ember.float32


def test_to_rejects_integer_dtype():
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        ENet().to(ember.int64)


def test_to_device_cpu_is_a_no_op():
    e = ENet()
    w = e.fc1.weight
    data = w.numpy(force=True)
    e.cpu()
    e.to("cpu")
    assert e.fc1.weight is w and w.numpy(force=True) is data


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")
def test_cuda_round_trip():  # pragma: no cover - GPU only
    e = ENet()
    w = e.fc1.weight
    e.cuda()
    assert e.fc1.weight is w and w.device.type == "cuda" and e.steps.device.type == "cuda"
    out = e(ember.ones(2, 3, device="cuda"))
    assert out.device.type == "cuda"
    e.cpu()
    assert w.device.type == "cpu"


# -- lookup, printing, copying ----------------------------------------------------------------
def test_get_submodule_parameter_buffer():
    e = ENet()
    assert e.get_submodule("") is e
    assert e.get_submodule("head.fc") is e.head.fc
    assert e.get_parameter("blocks.1.bias") is e.blocks[1].bias
    assert e.get_buffer("fc1.calls") is e.fc1.calls
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        e.get_submodule("nope")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        e.get_submodule("scale.x")
    with pytest.raises(AttributeError, match="`calls` is not an nn.Parameter"):
        e.get_parameter("fc1.calls")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        e.get_buffer("fc1.weight")
    new = EAffine(4, 2)
    e.set_submodule("head.fc", new)
    assert e.head.fc is new
    with pytest.raises(AttributeError, match="has no attribute `zzz`"):
        e.set_submodule("head.zzz", new, strict=True)


def test_repr_matches_torch():
    assert repr(ENet()) == repr(TNet())
    assert repr(EAffine(2, 3)) == repr(TAffine(2, 3)) == "Affine(in_features=2, out_features=3)"
    assert repr(nn.Module()) == repr(torch.nn.Module()) == "Module()"

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"


class Pickled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Sequential(nn.Module())
        self.fc1.weight = nn.Parameter(ember.randn(2, 2))
        self.register_buffer("b", ember.zeros(1))
        self.shared = self.fc1


def _check_clone(orig, clone):
    assert clone.shared is clone.fc1 and clone.fc1 is not orig.fc1
    assert clone.fc1.weight is clone._modules["fc1"]._parameters["weight"]
    assert _names(clone.named_parameters()) == _names(orig.named_parameters())
    for (n, a), (_, b) in zip(orig.state_dict().items(), clone.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    assert clone.fc1.weight.numpy(force=True) is not orig.fc1.weight.numpy(force=True)
    clone.fc1.w2 = nn.Parameter(ember.ones(1))  # the registries still mirror after the copy
    assert clone.fc1._parameters["w2"] is clone.fc1.w2 and not hasattr(orig.fc1, "w2")


def test_deepcopy_module():
    e = ENet()
    _randomize(e, TNet())
    _check_clone(e, copy.deepcopy(e))


def test_pickle_module():
    e = Pickled()
    _check_clone(e, pickle.loads(pickle.dumps(e)))


def test_shallow_copy_has_its_own_registries():
    e = EAffine(1, 1)
    c = copy.copy(e)
    assert c.weight is e.weight
    c.weight = nn.Parameter(ember.zeros(1, 1))
    assert e.weight is not c.weight and e._parameters["weight"] is e.weight


def test_call_is_fast_path_without_hooks():
    m = ETanh()
    m.forward = lambda x: "called"  # an instance attribute, as in PyTorch
    assert m(1) == "called"
