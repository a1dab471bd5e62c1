"""Small programs that make jax raise its common errors, one function each (run by
`scripts/paste_corpus.py capture-jax` in a virtualenv with jax and jaxlib)."""

import jax
import jax.numpy as jnp

_leaked = []


def concretization():
    return jax.jit(lambda x: int(x))(1.0)


def bool_conversion():
    return jax.jit(lambda x: x if x > 0 else -x)(1.0)


def reshape():
    return jnp.reshape(jnp.arange(6), (4, 2))


def vmap_sizes():
    return jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))


def escaped_tracer():
    jax.jit(lambda x: _leaked.append(x) or x)(1.0)
    return jax.jit(lambda y: y + _leaked[0])(2.0)


def boolean_index():
    return jax.jit(lambda x: x[x > 0])(jnp.arange(3.0))


def float_shape():
    return jnp.zeros((2.5, 3))


def too_many_indices():
    return jnp.ones(3)[1, 2]


def matmul_shapes():
    return jnp.ones((2, 3)) @ jnp.ones((4, 5))


def grad_not_scalar():
    return jax.grad(lambda x: x * 2)(jnp.ones(3))


def grad_int_input():
    return jax.grad(lambda x: x * 2)(1)


def concatenate_shapes():
    return jnp.concatenate([jnp.ones((2, 3)), jnp.ones((3, 4))])


def item_assignment():
    x = jnp.ones(3)
    x[0] = 2.0


def non_hashable_static():
    return jax.jit(lambda x: x, static_argnums=0)(jnp.ones(3))


def scan_carry():
    return jax.lax.scan(lambda c, x: (c.astype(jnp.int32), x), jnp.float32(0), jnp.ones(3))


def string_array():
    return jnp.array(["a", "b"])


def cond_branches():
    return jax.lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3))


ALL = [concretization, bool_conversion, reshape, vmap_sizes, escaped_tracer, boolean_index,
       float_shape, too_many_indices, matmul_shapes, grad_not_scalar, grad_int_input,
       concatenate_shapes, item_assignment, non_hashable_static, scan_carry, string_array,
       cond_branches]
