"""``tools/corpus.py`` (the corpus runner, not an installed package) loaded as ``corpus``."""

import importlib.util
import pathlib
import sys

_PATH = pathlib.Path(__file__).resolve().parents[2] / "tools" / "corpus.py"
_spec = importlib.util.spec_from_file_location("corpus", _PATH)
corpus = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("corpus", corpus)
_spec.loader.exec_module(corpus)
