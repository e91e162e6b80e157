"""The public functions (``ember.add``, ``ember.sum``, ...): argument handling, dtype
promotion and checks, then primitives from ``ember.ops``.

Each module lists its public names in ``__all__`` and the Tensor methods it provides in
``TENSOR_METHODS``; ``ember/_tensor_methods.py`` attaches those in one place.
"""
