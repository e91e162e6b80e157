"""ember.backend.malloc: glibc's trim and mmap thresholds set once at import, with an opt-out."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ember.backend import malloc

_SHOW = "import json, ember; from ember.backend import malloc; print(json.dumps(malloc.settings()))"


def _settings_in_child(**env):
    e = {k: v for k, v in os.environ.items() if k not in ("EMBER_MALLOC_TUNE", *malloc._OWN)}
    e.update(env)
    out = subprocess.run([sys.executable, "-c", _SHOW], env=e, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not malloc.wanted({}), reason="not glibc on Linux")
def test_set_at_import_on_glibc():
    assert _settings_in_child() == malloc.VALUES


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_opt_out_is_honoured(value):
    assert not malloc.wanted({"EMBER_MALLOC_TUNE": value})
    assert _settings_in_child(EMBER_MALLOC_TUNE=value) == {}


@pytest.mark.parametrize("var", ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"])
def test_the_processs_own_choice_wins(var):
    assert not malloc.wanted({var: "65536"})
    assert _settings_in_child(**{var: "65536"}) == {}


def test_tune_applies_once():
    assert malloc.tune() == malloc.settings()
    assert malloc.tune({"EMBER_MALLOC_TUNE": "0"}) == malloc.settings()  # already applied
