"""Layers (Linear, Conv2d, ...), one family a file; re-exported by ``ember.nn``."""
