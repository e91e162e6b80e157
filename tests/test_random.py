"""Seeding and generator state: runs are reproducible."""

from __future__ import annotations

import json

import pytest

import ember


def _draw():
    return (
        ember.rand(3).tolist(),
        ember.randn(2, 2).tolist(),
        ember.randint(0, 100, (4,)).tolist(),
        ember.randperm(6).tolist(),
    )


def test_manual_seed_reproduces():
    ember.manual_seed(123)
    a = _draw()
    ember.manual_seed(123)
    assert _draw() == a
    ember.manual_seed(124)
    assert _draw() != a


def test_manual_seed_returns_generator_and_initial_seed():
    g = ember.manual_seed(7)
    assert g is ember.default_generator
    assert ember.initial_seed() == 7 and g.initial_seed() == 7


def test_seed_reseeds_from_entropy():
    s1 = ember.seed()
    assert ember.initial_seed() == s1
    a = ember.rand(4).tolist()
    ember.manual_seed(s1)
    assert ember.rand(4).tolist() == a


def test_rng_state_is_a_byte_tensor_that_roundtrips(tmp_path):
    ember.manual_seed(0)
    state = ember.get_rng_state()
    assert (state.dtype, state.shape) == (ember.uint8, (ember.random.STATE_BYTES,))
    ember.save({"rng": state}, tmp_path / "rng.pt")
    a = _draw()
    ember.set_rng_state(ember.load(tmp_path / "rng.pt")["rng"])
    assert _draw() == a


def test_rng_state_from_the_old_dict_form_still_loads():
    ember.manual_seed(4)
    ember.rand(3)
    g = ember.random.default_generator
    old = {"seed": g.initial_seed(), "bit_generator": g.rng.bit_generator.state}
    old = json.loads(json.dumps(old))  # as an older JSON checkpoint held it
    a = _draw()
    ember.set_rng_state(old)
    fresh = ember.Generator().set_state(old)
    assert fresh.get_state().tolist() == ember.get_rng_state().tolist()
    assert _draw() == a and ember.initial_seed() == 4


def test_bad_rng_states_are_refused_naming_the_function():
    state = ember.get_rng_state()
    with pytest.raises(ember.EmberError, match="set_rng_state: RNG state is wrong size"):
        ember.set_rng_state(state[:10])
    with pytest.raises(TypeError, match="set_rng_state: RNG state must be a ByteTensor"):
        ember.set_rng_state(state.float())
    with pytest.raises(TypeError, match="Generator.set_state: expected a ByteTensor"):
        ember.Generator().set_state([1, 2])
    assert ember.get_rng_state().tolist() == state.tolist()  # nothing changed


def test_generator_is_independent_of_default():
    g = ember.Generator().manual_seed(5)
    a = ember.rand(3, generator=g).tolist()
    ember.manual_seed(0)
    ember.rand(10)
    g2 = ember.Generator()
    g2.manual_seed(5)
    assert ember.rand(3, generator=g2).tolist() == a
    assert g.device == ember.device("cpu")


def test_generator_state_roundtrip():
    g = ember.Generator().manual_seed(1)
    st = g.get_state()
    a = ember.randn(5, generator=g).tolist()
    assert g.set_state(st) is g
    assert ember.randn(5, generator=g).tolist() == a
    with pytest.raises(ember.EmberError, match="set_state: expected a state"):
        g.set_state({"oops": 1})
    torch = pytest.importorskip("torch")
    t = torch.Generator().manual_seed(1)
    assert g.get_state().dtype.name == str(t.get_state().dtype).removeprefix("torch.")


def test_generator_feeds_every_random_function():
    for fn in (
        lambda g: ember.rand(3, generator=g),
        lambda g: ember.randn(3, generator=g),
        lambda g: ember.randint(0, 9, (3,), generator=g),
        lambda g: ember.randperm(5, generator=g),
    ):
        a = fn(ember.Generator().manual_seed(3)).tolist()
        b = fn(ember.Generator().manual_seed(3)).tolist()
        assert a == b


def test_fork_rng_restores_state():
    ember.manual_seed(9)
    with ember.random.fork_rng():
        ember.rand(100)
    a = ember.rand(2).tolist()
    ember.manual_seed(9)
    assert ember.rand(2).tolist() == a


def test_reproducible_training_run():
    """Same seed, same init, same data order: identical losses."""

    def run():
        ember.manual_seed(42)
        w = ember.randn(4, 1, requires_grad=True)
        x = ember.randn(16, 4)
        y = ember.randn(16, 1)
        losses = []
        for _ in range(3):
            idx = ember.randperm(16)[:8]
            loss = ((x[idx].mm(w) - y[idx]) ** 2).sum()
            loss.backward()
            with ember.no_grad():
                w -= 0.01 * w.grad
                w.grad.zero_()
            losses.append(loss.item())
        return losses

    assert run() == run()


def test_float16_and_bfloat16_draws_reproduce():
    ember.manual_seed(2)
    a = ember.randn(3, dtype=ember.float16).tolist(), ember.rand(3, dtype=ember.bfloat16).tolist()
    ember.manual_seed(2)
    b = ember.randn(3, dtype=ember.float16).tolist(), ember.rand(3, dtype=ember.bfloat16).tolist()
    assert a == b
