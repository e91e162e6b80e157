"""Whole models and optimizers that ``torch.save`` pickled load into ember's classes.

Each file is written by real PyTorch (zip and legacy format); ember loads it with
``weights_only=False`` and with the classes allowlisted, and must give PyTorch's outputs on
the same input, keep the ``training`` flags, and continue the optimizer as PyTorch does.
The user's class lives in a module both sides see under one name (as ``__main__.Net`` does
in a program run once with ``import torch`` and once with ``import ember as torch``).
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError, WeightsOnlyError

torch = pytest.importorskip("torch")

USER_MODULE = "ember_test_user_models"  # where the test's Net lives, on both sides
FORMATS = {"zip": True, "legacy": False}
X = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)


def _net_class(lib):
    """The same class source over torch or ember (``lib``), as a program would define it."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4))
            self.act = nn.ReLU()
            self.head = nn.Linear(4 * 5 * 5, 3)
            self.scale = 0.5

        def forward(self, x):
            return self.head(self.act(self.features(x)).flatten(1)) * self.scale

    Net.__module__, Net.__qualname__ = USER_MODULE, "Net"
    return Net


@pytest.fixture
def user_module(monkeypatch):
    """A module holding ``Net``: torch's class while saving, ember's while loading."""
    mod = types.ModuleType(USER_MODULE)
    monkeypatch.setitem(sys.modules, USER_MODULE, mod)
    return mod


def _trained_torch_net(mod):
    mod.Net = _net_class(torch)
    torch.manual_seed(0)
    net = mod.Net()
    net(torch.randn(8, 3, 5, 5))  # moves BatchNorm's running statistics
    return net


def _save(obj, legacy: bool) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def _same_outputs(mine, theirs):
    got = mine(ember.from_numpy(X)).detach().numpy()
    want = theirs(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("mode", ["eval", "train"])
def test_user_model_loads_with_weights_only_false(fmt, mode, user_module):
    net = _trained_torch_net(user_module)
    getattr(net, mode)()
    blob = _save(net, not FORMATS[fmt])
    user_module.Net = _net_class(ember)
    mine = ember.load(io.BytesIO(blob), weights_only=False)
    assert type(mine) is user_module.Net
    assert isinstance(mine.features[0], ember.nn.Conv2d) and isinstance(mine.act, ember.nn.ReLU)
    assert [m.training for m in mine.modules()] == [m.training for m in net.modules()]
    assert mine.scale == 0.5
    assert list(mine.state_dict()) == list(net.state_dict())
    assert all(isinstance(p, ember.nn.Parameter) for p in mine.parameters())
    assert mine.state_dict()["features.1.num_batches_tracked"].item() == 1
    mine.eval(), net.eval()
    _same_outputs(mine, net)


def test_sequential_of_layers_with_safe_globals():
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 5 * 5, 3),
    )
    net(torch.randn(8, 3, 5, 5))
    net.eval()
    blob = _save(net, legacy=False)
    classes = [ember.nn.Sequential, ember.nn.Conv2d, ember.nn.BatchNorm2d, ember.nn.ReLU]
    with ember.serialization.safe_globals(classes + [ember.nn.Flatten, ember.nn.Linear]):
        mine = ember.load(io.BytesIO(blob))
    assert type(mine) is ember.nn.Sequential and not mine.training
    _same_outputs(mine, net)
    assert ember.serialization.get_safe_globals() == []


def test_each_missing_class_is_named_in_turn():
    """Like torch.load, the refusal names the first global not allowed; allowing it moves on."""
    blob = _save(torch.nn.Sequential(torch.nn.Linear(2, 2)), legacy=False)
    with pytest.raises(WeightsOnlyError, match=r"GLOBAL torch\.nn\.modules\.container\.Sequential"):
        ember.load(io.BytesIO(blob))
    with ember.serialization.safe_globals([ember.nn.Sequential]):
        with pytest.raises(WeightsOnlyError, match=r"GLOBAL torch\.nn\.modules\.linear\.Linear"):
            ember.load(io.BytesIO(blob))


def _message(load, blob):
    with pytest.raises(Exception) as info:
        load(io.BytesIO(blob))
    return str(info.value)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_refusal_message_is_torchs(fmt, user_module):
    net = _trained_torch_net(user_module)
    blob = _save(net, not FORMATS[fmt])
    theirs = _message(torch.load, blob)
    mine = _message(ember.load, blob)
    assert mine.startswith("<file object>: ")
    assert mine[len("<file object>: ") :] == _ember_words(theirs)


def _ember_words(message: str) -> str:
    """torch.load's message as ember words it: ember's API in place of torch's."""
    first = (
        "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
        "`torch.load` from `False` to `True`."
    )
    mine = (
        "The `weights_only` argument of `ember.load` defaults to `True`, as in `torch.load` "
        "since PyTorch 2.6."
    )
    docs = (
        "Check the documentation of torch.load to learn more about types accepted by default "
        "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
    ours = (
        "Check the documentation of ember.load to learn more about types accepted by default "
        "with weights_only (docs/serialization.md)."
    )
    issue = (
        "Please file an issue with the following so that we can make `weights_only=True` "
        "compatible with your use case: "
    )
    message = message.replace(first, mine).replace(docs, ours).replace(issue, "")
    message = message.replace("`torch.serialization.", "`ember.serialization.")
    return message.replace("Re-running `torch.load`", "Re-running `ember.load`")


def test_legacy_whole_model_is_refused_even_when_allowlisted(user_module):
    """torch.load refuses module classes in legacy files' persistent ids; so does ember."""
    net = _trained_torch_net(user_module)
    blob = _save(net, legacy=True)
    user_module.Net = _net_class(ember)
    allowed = [user_module.Net, ember.nn.Sequential, ember.nn.Conv2d, ember.nn.BatchNorm2d]
    allowed += [ember.nn.ReLU, ember.nn.Linear]
    user_module.Net = net.__class__
    with torch.serialization.safe_globals([net.__class__, torch.nn.Sequential, torch.nn.Conv2d]):
        with torch.serialization.safe_globals([torch.nn.BatchNorm2d, torch.nn.ReLU]):
            with torch.serialization.safe_globals([torch.nn.Linear]):
                theirs = _message(torch.load, blob)
    user_module.Net = allowed[0]
    with ember.serialization.safe_globals(allowed):
        mine = _message(ember.load, blob)
    assert "Only persistent_load of storage is allowed" in theirs
    assert mine[len("<file object>: ") :] == _ember_words(theirs)


def test_optimizer_continues_as_torchs(user_module):
    net = _trained_torch_net(user_module)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    net(torch.from_numpy(X)).sum().backward()
    opt.step()
    blob = _save({"model": net, "opt": opt, "epoch": 3}, legacy=False)
    user_module.Net = _net_class(ember)
    mine = ember.load(io.BytesIO(blob), weights_only=False)
    model, mopt = mine["model"], mine["opt"]
    assert mine["epoch"] == 3 and isinstance(mopt, ember.optim.SGD)
    assert mopt.param_groups[0]["params"][0] is next(model.parameters())
    assert mopt.param_groups[0]["momentum"] == 0.9
    for m, t in ((model, net), (mopt, opt)):
        m.zero_grad(), t.zero_grad()
    model(ember.from_numpy(X)).sum().backward()
    net(torch.from_numpy(X)).sum().backward()
    mopt.step(), opt.step()
    for (name, p), q in zip(model.named_parameters(), net.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), 1e-5, 1e-6, err_msg=name)


def test_adam_state_and_lr_survive():
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    mine = ember.load(io.BytesIO(_save([net, opt], legacy=True)), weights_only=False)
    state = mine[1].state_dict()
    want = opt.state_dict()
    assert state["param_groups"][0]["lr"] == 0.01
    for i, s in want["state"].items():
        assert float(state["state"][i]["step"]) == float(s["step"])
        np.testing.assert_allclose(state["state"][i]["exp_avg"].numpy(), s["exp_avg"].numpy())


def test_a_torch_class_ember_lacks_is_named():
    blob = _save(torch.nn.Linear(2, 2), legacy=True)  # (no CRC to fix after the edit)
    blob = blob.replace(b"torch.nn.modules.linear\nLinear", b"torch.nn.modules.linear\nLinbar")
    with pytest.raises(
        CheckpointError, match=r"torch\.nn\.modules\.linear\.Linbar.*no counterpart"
    ):
        ember.load(io.BytesIO(blob), weights_only=False)


def test_an_undefined_user_class_is_named(user_module):
    blob = _save(_trained_torch_net(user_module), legacy=False)
    del user_module.Net
    with pytest.raises(CheckpointError, match="'Net'.*define or import it before loading"):
        ember.load(io.BytesIO(blob), weights_only=False)


PROGRAM = """
{import_line}
import numpy as np

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())
        self.out = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.body(x))

if {save}:
    torch.manual_seed(0)
    torch.save(Net().eval(), {path!r})
model = torch.load({path!r}, weights_only=False)
x = torch.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
print(type(model).__name__, model.training, model(x).detach().numpy().round(6).tolist())
"""


def test_same_program_with_import_ember_as_torch(tmp_path):
    """A program saves with PyTorch; the same source with `import ember as torch` loads it."""
    path = str(tmp_path / "m.pt")

    def run(import_line, save):
        code = textwrap.dedent(PROGRAM.format(import_line=import_line, save=save, path=path))
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    theirs = run("import torch", True)
    mine = run("import ember as torch", False)
    assert mine == theirs and theirs.startswith("Net False [[")
