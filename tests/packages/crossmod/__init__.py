from crossmod.core import make_error, shape_error

__all__ = ["make_error", "shape_error"]
