"""``tf.GradientTape`` state is each thread's own (``ember/compat/tf/tape.py``): a tape recording
on one thread neither makes another thread's ops on the same Variables record, nor ends their
recording when it closes, nor turns another thread's gradient into a differentiable one."""

import threading

import numpy as np
import pytest

import ember.compat.tf as tf


def _run(*targets):
    """Run each target on its own thread (they meet at a shared barrier); re-raise the first
    failure."""
    barrier = threading.Barrier(len(targets), timeout=10)
    errors = []

    def guard(fn):
        try:
            fn(barrier.wait)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=guard, args=(fn,)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    if errors:
        raise errors[0]


def test_two_threads_record_their_own_tapes():
    v = tf.Variable([1.0, 2.0])
    got = {}

    def a(meet):
        with tf.GradientTape() as tape:
            meet()  # 1: A records; B has no tape
            meet()  # 2
            loss = tf.reduce_sum(v * v)
        meet()  # 3: A's tape has ended; B's is open
        got["a"] = tape.gradient(loss, v)

    def b(meet):
        meet()  # 1
        outside = v * 3.0  # A's tape does not watch v for this thread
        got["outside"] = (outside.requires_grad, outside.numpy())
        meet()  # 2
        with tf.GradientTape() as tape:
            meet()  # 3: A's tape ending did not stop this one
            loss = tf.reduce_sum(v * v * v)
        got["b"] = tape.gradient(loss, v)

    _run(a, b)
    assert got["outside"][0] is False
    np.testing.assert_allclose(got["outside"][1], [3.0, 6.0])
    np.testing.assert_allclose(got["a"].numpy(), [2.0, 4.0])
    np.testing.assert_allclose(got["b"].numpy(), [3.0, 12.0])
    assert not v.requires_grad  # no tape records on this thread


def test_a_gradient_nests_only_over_its_own_threads_tapes():
    v = tf.Variable(3.0)
    got = {}

    def outer(meet):
        with tf.GradientTape():
            meet()  # 1: this tape records while the other thread takes a gradient
            meet()  # 2

    def inner(meet):
        meet()  # 1
        with tf.GradientTape() as tape:
            y = v * v
        got["grad"] = tape.gradient(y, v)
        meet()  # 2

    _run(outer, inner)
    assert float(got["grad"]) == 6.0
    assert not got["grad"].requires_grad  # not a differentiable result: no tape of its thread


def test_a_tensor_watched_on_two_threads_stays_watched_until_both_end():
    x = tf.constant([1.0, 2.0])
    got = {}

    def a(meet):
        with tf.GradientTape() as tape:
            tape.watch(x)
            meet()  # 1
        meet()  # 2: A's tape has ended

    def b(meet):
        with tf.GradientTape() as tape:
            tape.watch(x)
            meet()  # 1
            meet()  # 2
            y = tf.reduce_sum(x * x)
        got["b"] = tape.gradient(y, x)

    _run(a, b)
    np.testing.assert_allclose(got["b"].numpy(), [2.0, 4.0])
    assert not x.requires_grad


def test_variables_record_only_inside_a_tape_on_this_thread():
    v = tf.Variable([1.0])
    assert not (v * 2.0).requires_grad
    with tf.GradientTape() as tape:
        assert (v * 2.0).requires_grad
        loss = tf.reduce_sum(v * 2.0)
    assert not (v * 2.0).requires_grad
    assert float(tape.gradient(loss, v)[0]) == 2.0
    frozen = tf.Variable([1.0], trainable=False)
    with tf.GradientTape():
        assert not (frozen * 2.0).requires_grad


@pytest.mark.parametrize("persistent", [False, True])
def test_gradient_after_the_block_still_finds_trainable_variables(persistent):
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=persistent) as tape:
        y = v * v * v
    assert float(tape.gradient(y, v)) == 12.0
    assert not v.requires_grad
