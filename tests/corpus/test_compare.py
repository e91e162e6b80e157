"""The corpus runner's own rules: the import alias, how outputs compare in each mode, and
that nothing passes vacuously (no output, a crash, a missing line)."""

from __future__ import annotations

import doctest
import textwrap

import pytest

from ._runner import corpus

EXACT = corpus.Mode("exact")
TRAJ = corpus.Mode("trajectory", rtol=0.5, atol=0.05)


@pytest.mark.parametrize(
    "want, got, same",
    [
        ("loss 0.5\n", "loss 0.5\n", True),
        ("loss 0.123457\n", "loss 0.123456\n", True),  # one unit in the last printed digit
        ("loss 0.123457\n", "loss 0.123455\n", False),
        ("tensor([1., 2.])\n", "tensor([1., 3.])\n", False),
        ("1.5e-05\n", "1.6e-05\n", True),
        ("1e+10\n", "2e+10\n", False),
        ("torch.float32\n", "ember.float32\n", True),  # ember's reprs spell ember
        ("<Foo object at 0x7f01>\n", "<Foo object at 0x55aa>\n", True),
        ("step 3\n", "step 4\n", False),
        ("a b\n", "a  b\n", False),
        ("x 1\ny 2\n", "x 1\n", False),
        ("x 1\n", "x 1\ny 2\n", False),
        ("nan inf\n", "nan inf\n", True),
        ("nan\n", "1.0\n", False),
        ("", "", False),  # nothing printed: nothing compared, never "same"
    ],
)
def test_exact(want, got, same):
    assert (corpus.compare(want, got, EXACT) is None) is same


@pytest.mark.parametrize(
    "want, got, same",
    [
        ("loss 2.0\nloss 1.0\n", "loss 2.9\nloss 1.4\n", True),
        ("loss 2.0\nloss 1.0\n", "loss 2.0\nloss 1.8\n", False),  # outside the band
        ("loss 2.0\nloss 0.3\n", "loss 0.2\nloss 0.3\n", False),  # goes up, not down
        ("epoch 1 loss 2.0\n", "epoch 2 loss 2.0\n", False),  # integers stay exact
        ("torch.Size([4, 3])\n", "torch.Size([4, 2])\n", False),
        ("acc 0.900\n", "acc 0.880\n", True),
    ],
)
def test_trajectory(want, got, same):
    assert (corpus.compare(want, got, TRAJ) is None) is same


def test_first_difference_is_named():
    why = corpus.compare("a 1\nb 2\nc 3\n", "a 1\nb 5\nc 3\n", EXACT)
    assert why == "line 2: expected 'b 2', got 'b 5'"


def test_mode_line_is_required(tmp_path):
    p = tmp_path / "p.py"
    p.write_text("# corpus: trajectory rtol=0.3 atol=0.01\nimport torch\n")
    assert corpus.mode_of(p) == corpus.Mode("trajectory", 0.3, 0.01)
    p.write_text("import torch\n")
    with pytest.raises(ValueError, match="corpus"):
        corpus.mode_of(p)


def test_alias_resolves_torch_imports_to_ember(tmp_path):
    p = tmp_path / "p.py"
    p.write_text(
        textwrap.dedent(
            """\
            import torch
            import torch.nn.functional as F
            from torch.utils.data import DataLoader
            from torch.optim.lr_scheduler import StepLR
            import ember
            print(torch is ember, F is ember.nn.functional, DataLoader is ember.data.DataLoader)
            print(torch.nn.__spec__.name, StepLR is ember.optim.lr_scheduler.StepLR)
            try:
                import torch.no_such_module
            except ModuleNotFoundError as e:
                print(e.name)
            """
        )
    )
    run = corpus.run_program(p, "ember")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "True True True\nember.nn True\ntorch.no_such_module\n"


def test_a_crash_is_not_a_run(tmp_path):
    p = tmp_path / "p.py"
    p.write_text("# corpus: exact\nprint('start')\nraise KeyError('boom')\n")
    outcome = corpus.check(p, "start\n")
    assert not outcome.ran and not outcome.same
    assert outcome.why == "KeyError: 'boom'"


def test_runner_docstring_examples():
    assert doctest.testmod(corpus).failed == 0
