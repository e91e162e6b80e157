"""Every op case of tests/ops/*.py's tables (the forward pass, in float32) exports to ONNX and
gives in onnxruntime what eager mode gives: a new primitive without a converter fails here."""

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import ember  # noqa: E402
from ember import static  # noqa: E402
from ember.onnx.export import to_onnx  # noqa: E402
from tests.onnx.helpers import session  # noqa: E402
from tests.ops.harness import _first, ember_inputs  # noqa: E402
from tests.static.test_op_tables import CASES, DATA_DEPENDENT, _build  # noqa: E402


def _float32(arrays):
    return [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_op_table_case_exports(case):
    arrays = _float32(case.arrays())
    want = _first(case.fn(ember, *ember_inputs(case, arrays, False))).numpy()
    try:
        g, phs, out = _build(case, arrays, grad=False)
    except static.TraceError:
        assert any(k in case.name for k in DATA_DEPENDENT), case.name
        return
    names = [f"in{i}" for i in range(len(phs))]
    d = out._data
    outs = [g.add_constant(d) if isinstance(d, np.ndarray) else d]
    model = to_onnx(g, names, outs, opset=18)
    sess = session(model.SerializeToString())
    used = {i.name for i in sess.get_inputs()}
    (got,) = sess.run(None, {n: a for n, a in zip(names, arrays) if n in used})
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        atol, rtol = max(case.atol, 1e-5), max(case.rtol, 1e-4)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)
