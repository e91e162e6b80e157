"""Run the PyTorch-style program corpus under real PyTorch and under ember, and compare.

Each program in ``tests/corpus/programs/`` is an ordinary PyTorch script (``import torch``
at the top). It runs in a subprocess twice: once as written, under real PyTorch, and once
with an import alias (``install_alias``) that makes ``import torch``, ``import
torch.nn.functional as F``, ``from torch.utils.data import ...`` resolve to ``ember``,
``ember.nn.functional``, ``ember.utils.data``... The two stdouts are compared line by line
under the mode the program declares in a comment at its top:

- ``# corpus: exact``: deterministic programs; text identical, every number equal to
  rtol 1e-6 / atol 1e-7;
- ``# corpus: trajectory [rtol=R] [atol=A]``: programs whose random initialisation differs
  (ember's generator is not PyTorch's); text identical, integers equal, and each series of
  floats (the same line text and position, read down the output: a loss per epoch) ends
  within the band of PyTorch's last value and moves the same way (down, up or flat) from
  its first value to its last.

Before comparing, both outputs spell ``ember`` as ``torch`` (ember's reprs say
``ember.float32``) and object addresses (``0x7f...``) become ``0x?``.

PyTorch's output is cached in ``tests/corpus/expected/<name>.txt``, keyed by the program's
SHA-256 and the torch version, so the tests and CI run only the ember side. ::

    python tools/corpus.py             # all programs; refreshes stale caches when torch is here
    python tools/corpus.py --update    # re-run PyTorch for every program, rewrite the caches
    python tools/corpus.py NAME ...    # only these programs (file stems)
    python tools/corpus.py --ember FILE  # run any script under ember with the alias

It prints ``N/M run, K/M same`` and, for each failing program, the first differing line or
the last line of its exception.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "corpus" / "programs"
EXPECTED = ROOT / "tests" / "corpus" / "expected"
TIMEOUT_S = 120
EXACT_RTOL, EXACT_ATOL = 1e-6, 1e-7
TRAJECTORY_RTOL, TRAJECTORY_ATOL = 0.5, 0.05  # a trajectory program's band unless it says


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolve ``torch`` and ``torch.<path>`` to ``ember`` and ``ember.<path>``: the very
    module objects, so ``torch.nn is ember.nn`` and classes keep ember's identity."""

    def __init__(self) -> None:
        self._specs: dict[str, object] = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = "ember" + fullname[len("torch") :]
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):
                return None  # Python then raises "No module named 'torch.<path>'"
            raise
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        module = sys.modules["ember" + spec.name[len("torch") :]]
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamped the alias's spec on the module: give ember its own back.
        module.__spec__ = self._specs.pop(module.__spec__.name)


def install_alias() -> None:
    """Make ``import torch`` (and every ``torch.*`` submodule import) give ember's modules,
    in a process that has not imported the real torch (``sys.modules`` is looked up first)."""
    if not any(isinstance(f, _TorchAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchAlias())


def _bootstrap(program: Path, framework: str) -> str:
    """The ``python -c`` text that runs ``program`` as ``__main__`` under ``framework``."""
    alias = ""
    if framework == "ember":
        tools = str(ROOT / "tools")
        alias = f"sys.path.insert(0, {tools!r}); import corpus; corpus.install_alias(); "
    return f"import runpy, sys; {alias}runpy.run_path({str(program)!r}, run_name='__main__')"


@dataclasses.dataclass
class Run:
    """One program's run: exit status, stdout, stderr."""

    returncode: int
    stdout: str
    stderr: str

    def error_line(self) -> str:
        """The exception's last line (or why the run failed)."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else f"exit status {self.returncode}"


def run_program(program: Path, framework: str) -> Run:
    """Run ``program`` in a fresh interpreter under ``"torch"`` or ``"ember"``, on the CPU
    with one thread, in an empty temporary working directory."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        CUDA_VISIBLE_DEVICES="",
        PYTHONWARNINGS="ignore",
    )
    with tempfile.TemporaryDirectory() as cwd:
        try:
            done = subprocess.run(
                [sys.executable, "-c", _bootstrap(program, framework)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return Run(-1, "", f"timed out after {TIMEOUT_S} s")
    return Run(done.returncode, done.stdout, done.stderr)


# ---- the comparison ---------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)(?![\w])")


def normalize(text: str) -> list[str]:
    """Output lines with ``ember`` spelled ``torch`` and object addresses hidden."""
    text = re.sub(r"\bember\b", "torch", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    return text.rstrip("\n").split("\n") if text.strip() else []


def _split(line: str) -> tuple[str, list[str]]:
    """A line's text with numbers replaced by ``#``, and the numbers as written."""
    return _NUMBER.sub("#", line), _NUMBER.findall(line)


def _is_int(token: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", token) is not None


def _last_digit(token: str) -> float:
    """One unit in the last decimal ``token`` shows (``"0.1235"`` -> 1e-4, ``"2.5e-05"`` ->
    1e-6; none for ``"2."`` or ``"3"``): two values within tolerance can print that far apart."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals) if decimals else 0.0


def _close(a: str, b: str, rtol: float, atol: float) -> bool:
    """Whether number ``a`` (ember's, as printed) matches ``b`` (PyTorch's)."""
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    shown = max(_last_digit(a), _last_digit(b))
    return abs(x - y) <= atol + rtol * abs(y) + shown * (1 + 1e-9)


@dataclasses.dataclass(frozen=True)
class Mode:
    """How a program's output is compared: ``exact`` or ``trajectory`` with a band."""

    kind: str
    rtol: float = EXACT_RTOL
    atol: float = EXACT_ATOL


def mode_of(program: Path) -> Mode:
    """The mode a program declares in its ``# corpus: ...`` comment.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "p.py"
    >>> _ = p.write_text("# corpus: trajectory rtol=0.3 atol=0.05\\nimport torch\\n")
    >>> mode_of(p)
    Mode(kind='trajectory', rtol=0.3, atol=0.05)
    """
    for line in program.read_text().splitlines()[:5]:
        m = re.match(r"#\s*corpus:\s*(exact|trajectory)\b(.*)", line)
        if m:
            opts = dict(re.findall(r"(\w+)=([\d.eE+-]+)", m.group(2)))
            if m.group(1) == "exact":
                return Mode("exact")
            rtol = float(opts.get("rtol", TRAJECTORY_RTOL))
            return Mode("trajectory", rtol, float(opts.get("atol", TRAJECTORY_ATOL)))
    raise ValueError(f"{program.name}: no '# corpus: exact|trajectory' line at the top")


def compare(expected: str, actual: str, mode: Mode) -> str | None:
    """``None`` when ``actual`` (ember's stdout) matches ``expected`` (PyTorch's) under
    ``mode``; otherwise the first difference, one line. Empty output never matches.

    >>> compare("loss 0.5\\n", "loss 0.5000001\\n", Mode("exact")) is None
    True
    >>> compare("loss 0.5\\n", "loss 0.7\\n", Mode("exact"))
    "line 1: expected 'loss 0.5', got 'loss 0.7'"
    >>> band = Mode("trajectory", rtol=0.5, atol=0.05)
    >>> compare("loss 2.0\\nloss 1.0\\n", "loss 2.5\\nloss 1.2\\n", band) is None
    True
    """
    want, got = normalize(expected), normalize(actual)
    if not want:
        return "PyTorch's output is empty: the program shows nothing to compare"
    series: dict[tuple[str, int], list[tuple[int, str, str]]] = {}
    for i, (w, g) in enumerate(zip(want, got), 1):
        diff = f"line {i}: expected {w!r}, got {g!r}"
        (wtext, wnums), (gtext, gnums) = _split(w), _split(g)
        if wtext != gtext or len(wnums) != len(gnums):
            return diff
        for k, (a, b) in enumerate(zip(gnums, wnums)):
            if mode.kind == "exact" or (_is_int(a) and _is_int(b)):
                if not _close(a, b, EXACT_RTOL, EXACT_ATOL):
                    return diff
            else:
                series.setdefault((wtext, k), []).append((i, a, b))
    if len(want) != len(got):
        n = min(len(want), len(got))
        extra = want[n] if len(want) > n else got[n]
        side = "missing" if len(want) > n else "extra"
        return f"line {n + 1}: {side} line {extra!r} ({len(got)} lines, expected {len(want)})"
    for (text, _), points in series.items():
        (_, g0, w0), (i, g1, w1) = points[0], points[-1]
        if not _close(g1, w1, mode.rtol, mode.atol):
            return f"line {i}: {text!r}: {g1} is outside the band of PyTorch's {w1}"
        trend = (_trend(float(w0), float(w1), mode.atol), _trend(float(g0), float(g1), mode.atol))
        if len(points) > 1 and trend[0] != trend[1]:
            return f"line {i}: {text!r}: PyTorch's series goes {trend[0]}, ember's {trend[1]}"
    return None


def _trend(first: float, last: float, atol: float) -> str:
    if abs(last - first) <= atol:
        return "flat"
    return "down" if last < first else "up"


# ---- the cache of PyTorch's output ------------------------------------------------------


def programs() -> list[Path]:
    """Every corpus program, by name."""
    return sorted(PROGRAMS.glob("*.py"))


def cache_key(program: Path) -> str:
    """The first line of a program's cache: its SHA-256 and the torch version it ran under."""
    digest = hashlib.sha256(program.read_bytes()).hexdigest()
    return f"# sha256={digest} torch={torch_version()}"


def torch_version() -> str | None:
    """The installed torch's version, without importing it (None when absent)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def cached(program: Path) -> tuple[str | None, str]:
    """``(key, output)`` from the program's cache file (``(None, "")`` when there is none)."""
    path = EXPECTED / f"{program.stem}.txt"
    if not path.exists():
        return None, ""
    key, _, output = path.read_text().partition("\n")
    return key, output


def is_fresh(program: Path) -> bool:
    """Whether the cache was made from this program text (and this torch, when one is here)."""
    key, _ = cached(program)
    if key is None:
        return False
    digest = hashlib.sha256(program.read_bytes()).hexdigest()
    same_program = f"sha256={digest}" in key.split()
    version = torch_version()
    return same_program and (version is None or f"torch={version}" in key.split())


def expected_output(program: Path, update: bool = False) -> str:
    """PyTorch's stdout for ``program``: from the cache when fresh, else run and cached.
    Raises ``RuntimeError`` when it must run PyTorch and cannot, or PyTorch fails on it."""
    if is_fresh(program) and not update:
        return cached(program)[1]
    if torch_version() is None:
        raise RuntimeError(f"{program.name}: the cache is stale and torch is not installed")
    run = run_program(program, "torch")
    if run.returncode != 0:
        raise RuntimeError(f"{program.name} fails under PyTorch: {run.error_line()}")
    EXPECTED.mkdir(parents=True, exist_ok=True)
    (EXPECTED / f"{program.stem}.txt").write_text(f"{cache_key(program)}\n{run.stdout}")
    return run.stdout


@dataclasses.dataclass
class Outcome:
    """One program's result: whether it ran under ember and matched PyTorch."""

    name: str
    ran: bool
    same: bool
    why: str = ""


def check(program: Path, expected: str) -> Outcome:
    """Run ``program`` under ember and compare its stdout with ``expected`` (PyTorch's)."""
    run = run_program(program, "ember")
    if run.returncode != 0:
        return Outcome(program.stem, False, False, run.error_line())
    why = compare(expected, run.stdout, mode_of(program))
    return Outcome(program.stem, True, why is None, why or "")


def main(argv: list[str] | None = None) -> int:
    """The script: check the corpus (or the named programs) and print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="program stems (default: all)")
    parser.add_argument("--update", action="store_true", help="re-run PyTorch, rewrite caches")
    parser.add_argument("--ember", metavar="FILE", help="run FILE under ember with the alias")
    args = parser.parse_args(argv)
    if args.ember:
        install_alias()
        import runpy

        runpy.run_path(args.ember, run_name="__main__")
        return 0
    chosen = [p for p in programs() if not args.names or p.stem in args.names]
    outcomes = []
    for program in chosen:
        try:
            outcome = check(program, expected_output(program, args.update))
        except RuntimeError as e:
            outcome = Outcome(program.stem, False, False, str(e))
        outcomes.append(outcome)
        status = "same" if outcome.same else ("differs" if outcome.ran else "FAILS")
        print(f"{outcome.name:32} {status}", flush=True)
    m = len(outcomes)
    n = sum(o.ran for o in outcomes)
    k = sum(o.same for o in outcomes)
    print(f"{n}/{m} run, {k}/{m} same")
    for o in outcomes:
        if not o.same:
            print(f"  {o.name}: {o.why}")
    return 0 if k == m else 1


if __name__ == "__main__":
    sys.exit(main())
