"""Messages built across statements before the raise: `+=` and `.append` over branches and
loops, lists joined and cut, a bound `.format`, `try` branches, an unpacked message added to."""

CALLS = {}


def appended_in_loop(errs=(("a", 1, 2), ("b", 3, 4)), name="tree"):
    msg = []
    msg.append(f"{name} must have same structure, but there are differences: ")
    for path, first, second in errs:
        msg.append(f"    * at {path}, {first} vs {second}")
    raise TypeError("\n".join(msg))


def sizes(counts=((3, 1), (4, 2)), axis_size=None):
    msg = ["got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    (sz, ct), *others = counts
    if ct == 1:
        msg.append(f"  * one axis had size {sz};\n")
    else:
        msg.append(f"  * most axes ({ct} of them) had size {sz};\n")
    for sz, ct in others:
        if ct == 1:
            msg.append(f"  * one axis had size {sz};\n")
        else:
            msg.append(f"  * some axes ({ct} of them) had size {sz};\n")
    raise ValueError("".join(msg)[:-2])  # the last semicolon and newline cut


def lists_added(status=403, fix=("grant the permission", "or use another account")):
    err_msg = [f"API Error: {status}"]
    if status == 403:
        err_msg.append("The service account cannot read pods.")
    raise RuntimeError("\n".join(err_msg + list(fix)))


def _shape_error(shape, context=""):
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if context:
        msg += f" {context}."
    if any(isinstance(x, str) for x in shape):
        msg += "\nIf using `jit`, try using `static_argnums`."
        for x in shape:
            if isinstance(x, str):
                msg += x.upper()
    return TypeError(msg)


def canonicalize_shape(shape=(1, "n"), context="in reshape"):
    raise _shape_error(shape, context)


def bound_format(x="y"):
    msg = "Gradient only defined for scalar-output functions. Output {}.".format
    raise TypeError(msg(f"was {x}"))


def unpacked(error=ValueError("Tree structure differs")):
    (msg,) = error.args
    msg += "\n\nThe 'full pytree' here is the tuple of arguments passed positionally."
    raise ValueError(msg)


def try_else(what="in_shardings", value=(1,)):
    msg = f"{what} specification must be a tree prefix of the positional arguments."
    try:
        len(value)
    except TypeError:
        pass
    else:
        msg += f" But {what} is the wrong length."
    raise ValueError(msg)


def added_in_loop(names=("a", "b")):
    msg = "unknown names:"
    for name in names:
        msg += f" {name!r}"
    raise KeyError(msg)


def reraised(text="bad"):
    try:
        raise ValueError(text)
    except ValueError as e:
        raise RuntimeError(f"Could not parse the header: {e}") from e


def reraised_str(text="bad"):
    try:
        raise ValueError(text)
    except ValueError as e:
        raise RuntimeError("Could not parse the header: " + str(e)) from e
