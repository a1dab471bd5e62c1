class RematTraced:
    def _check_differentiable(self, disallowed):
        if disallowed:
            raise NotImplementedError(
                "Effects not supported in partial-eval of `checkpoint`/`remat`: "
                f"{disallowed}")


def conversions(shape, dtype):
    raise ValueError(f"bad shape {shape!r}, dtype {dtype:>10}, both {shape!s:{dtype}}")


def expressions(x):
    raise TypeError(f"got {type(x).__name__} with {len(x) + 1} items and {x[0]}")


def self_documenting(value):
    raise ValueError(f"expected positive: {value=}")


def doubled(name):
    raise KeyError(f"{{{name}}} is not a field")


def mixed_prefixes(n):
    raise ValueError(rf"pattern \d+ failed {n}" F'{n}' "end")
