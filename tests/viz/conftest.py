"""Fixtures of the ``ember.viz`` tests: Graphviz's ``dot`` program for the rendering tests.

The DOT-source tests need nothing. Rendering needs the ``graphviz`` Python package (the ``viz``
extra, part of ``test``) and Graphviz's ``dot`` program, a system package that pip cannot
install. When ``dot`` is missing and the tests run as root on a machine with ``apt-get`` (CI: a
fresh Debian machine), the ``dot_program`` fixture installs it once per session with
``apt-get update`` and ``apt-get install -y --no-install-recommends graphviz``, each under a
time limit, and prints what it runs. Anywhere else (not root, no apt-get, the install failed,
or ``EMBER_VIZ_NO_INSTALL=1``) the rendering tests are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

import pytest

UPDATE_TIMEOUT_S = 180
INSTALL_TIMEOUT_S = 300


def _say(config, message: str) -> None:
    """Print past pytest's output capture, so the install shows even with ``-q``."""
    capman = config.pluginmanager.getplugin("capturemanager")
    ctx = capman.global_and_fixture_disabled() if capman else contextlib.nullcontext()
    with ctx:
        print(f"\n[tests/viz] {message}", flush=True)


def _run(config, argv: list[str], timeout: int) -> str | None:
    """Run ``argv``; None if it worked, else why not."""
    _say(config, f"running: {' '.join(argv)} (time limit {timeout} s)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"`{' '.join(argv)}` did not finish in {timeout} s"
    except OSError as e:
        return f"`{' '.join(argv)}` could not run: {e}"
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        return f"`{' '.join(argv)}` failed (exit {r.returncode}): {' | '.join(tail)}"
    return None


def _install_dot(config) -> str | None:
    """Install Graphviz with apt-get when allowed; None if ``dot`` is there now, else why not."""
    if os.environ.get("EMBER_VIZ_NO_INSTALL"):
        return "Graphviz's `dot` is not on PATH and EMBER_VIZ_NO_INSTALL is set"
    apt = shutil.which("apt-get")
    if apt is None:
        return "Graphviz's `dot` is not on PATH and there is no apt-get to install it"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return (
            "Graphviz's `dot` is not on PATH and the tests do not run as root; install it "
            "with `sudo apt-get install graphviz`"
        )
    _say(config, "Graphviz's `dot` is not on PATH: installing Debian's graphviz package")
    lock = ["-o", "DPkg::Lock::Timeout=60"]
    why = _run(config, [apt, *lock, "update"], UPDATE_TIMEOUT_S) or _run(
        config,
        [apt, *lock, "install", "-y", "--no-install-recommends", "graphviz"],
        INSTALL_TIMEOUT_S,
    )
    if why is not None:
        _say(config, f"could not install graphviz: {why}")
        return f"Graphviz's `dot` is not on PATH and installing it failed: {why}"
    if shutil.which("dot") is None:
        return "apt-get installed graphviz but `dot` is still not on PATH"
    _say(config, f"installed: {shutil.which('dot')}")
    return None


@pytest.fixture(scope="session")
def dot_program(request) -> str:
    """The path of Graphviz's ``dot`` (installed with apt-get if need be and allowed) with the
    ``graphviz`` Python package importable; skips the test otherwise. A skip is cached for the
    session, so the install is tried once."""
    pytest.importorskip(
        "graphviz", reason="the graphviz Python package is not installed (pip install graphviz)"
    )
    path = shutil.which("dot")
    if path is None:
        why = _install_dot(request.config)
        if why is not None:
            pytest.skip(why)
        path = shutil.which("dot")
    return path
