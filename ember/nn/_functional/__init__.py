"""The pieces of ``ember.nn.functional``, one family a file (re-exported by functional.py)."""
