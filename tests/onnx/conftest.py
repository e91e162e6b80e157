import pytest

from ember import static


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    """Each test starts and ends without a default graph (so eager code stays eager)."""
    static.reset_default_graph()
    yield
    static.reset_default_graph()
