import numpy as np
import pytest

import ember


@pytest.fixture(autouse=True)
def _seed_and_defaults():
    """Every test starts from the same seeds and ember's defaults."""
    ember.manual_seed(0)
    np.random.seed(0)
    yield
    ember.set_default_dtype(ember.float32)
