"""The PyTorch-program corpus: each program in ``programs/`` runs under ember through the
``torch`` import alias and prints what real PyTorch printed (its cached output in
``expected/``), compared as the program's ``# corpus:`` line says. See
docs/pytorch_programs.md; ``python tools/corpus.py`` prints the summary."""

from __future__ import annotations

import pathlib

import pytest

from ._runner import corpus

# Programs that fail today, with what ember lacks. strict=True: when the piece lands the
# program passes, the xfail fails, and its line here must go.
XFAIL: dict = {
    "lb_poly_rmsprop": "RMSprop's square_avg.mul_(alpha).addcmul_(g, g, value=1-alpha) rounds "
    "once in PyTorch's CPU kernel (a fused multiply-add), twice in ember's rule and NumPy "
    "override (emulating the FMA matches PyTorch's square_avg at every step), and "
    "param.addcdiv_(g, avg, value=-lr) rounds unlike ember's p -= lr * (g / avg): 1-ulp "
    "differences that RMSprop's normalised steps amplify (line 2: loss 369.7740 where "
    "PyTorch prints 369.7745)",
}

PROGRAMS = corpus.programs()


def _param(program: pathlib.Path):
    reason = XFAIL.get(program.stem)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(program, id=program.stem, marks=marks)


@pytest.mark.parametrize("program", [_param(p) for p in PROGRAMS])
def test_program_runs_and_matches_pytorch(program):
    key, expected = corpus.cached(program)
    assert key is not None, f"no cache: run python tools/corpus.py --update {program.stem}"
    outcome = corpus.check(program, expected)
    assert outcome.ran, f"{program.name} fails under ember: {outcome.why}"
    assert outcome.same, f"{program.name} differs from PyTorch: {outcome.why}"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_cache_is_fresh(program):
    assert corpus.is_fresh(program), (
        f"expected/{program.stem}.txt was not made from this program (or this torch): "
        f"run python tools/corpus.py --update {program.stem}"
    )


def test_corpus_is_large_and_every_xfail_names_a_program():
    names = {p.stem for p in PROGRAMS}
    assert len(names) >= 32
    assert set(XFAIL) <= names
    assert {corpus.mode_of(p).kind for p in PROGRAMS} == {"exact", "trajectory"}
    exact = sum(corpus.mode_of(p).kind == "exact" for p in PROGRAMS)
    assert exact >= 0.8 * len(PROGRAMS)  # most of the corpus compares number for number
