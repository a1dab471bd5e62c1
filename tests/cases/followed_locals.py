"""Text formatted after it is built, and local lambdas that make a message or an exception: a
format string that already holds an f-string's values, `{{}}` kept for `.format`, a format
string with more fields than values (it fails with IndexError, so it stays dynamic), a lambda
that returns an f-string and one that returns an exception."""

import enum

CALLS = {}
EQUIVALENTS = {"add": "add", "max": "maximum"}


class Mode(enum.Enum):
    RAGGED = 1
    DENSE = 2


def same_dtypes(name="add", dtypes=("int32", "float32")):
    msg = "lax.{} requires arguments to have the same dtypes, got {}."
    if name in EQUIVALENTS:
        equiv = EQUIVALENTS[name]
        msg += f" (Tip: jnp.{equiv} is a similar function that does automatic type promotion)."
    raise TypeError(msg.format(name, ", ".join(dtypes)))


def unique_sources(op_name="ppermute", perm=((0, 1), (0, 2))):
    msg = f"{op_name} sources and destinations must be unique, got {{}}."
    raise ValueError(msg.format(perm))


def arraylike(fun_name="sum", arg=(1,), pos=0):
    msg = f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
    raise TypeError(msg.format(fun_name, type(arg), pos))


def too_few_values(obj_arr=((1, 2), (3, 4))):
    msg = "{} {} must be 1-dimensional, got {}."
    raise TypeError(msg.format(len(obj_arr)))


def padding(axis_size=1, pad=2, before=True, i=0):
    poly_error = lambda: (  # noqa: E731 - a local lambda, as jax writes it
        "Shape polymorphism is supported for jnp.pad with 'reflect' padding only when "
        f"the axis size (= {axis_size}) is larger than the padding (= {pad}). "
        f"Error while handling {'left' if before else 'right'} padding on axis {i}.")
    if axis_size < pad:
        raise ValueError(poly_error())


def ragged(mode=Mode.DENSE):
    unimplemented = lambda fn_name, ragged_mode: NotImplementedError(  # noqa: E731
        f"Unimplemented {fn_name} for ragged dot general in mode {ragged_mode.name}.")
    if mode is Mode.DENSE:
        raise unimplemented("grad_x_dims", mode)
    raise unimplemented(fn_name="grad_y_dims", ragged_mode=mode)


class Fragment:
    mlir_dtype = "f8E4M3FN"

    def convert(self):
        raise NotImplementedError(self.mlir_dtype)


def not_a_layout(layout=3.5):
    raise ValueError(type(layout))


def transpose(mode=Mode.RAGGED):
    unimplemented = lambda fn_name: NotImplementedError(  # noqa: E731
        f"Unimplemented {fn_name} in mode {mode.name}.")

    def grad_x_dims():
        match mode:  # a `match` may bind any name here: the lambda's names are read outside
            case Mode.DENSE:
                return 0
            case _:
                raise unimplemented("grad_x_dims")

    grad_x_dims()
