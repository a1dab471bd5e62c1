"""An output root with one annotated repository, as extract leaves it (the output_root fixture)."""

from __future__ import annotations

from crawler.records import Pin

SOURCE = b'''\
class Shape:
    def check(self, dims):
        if len(dims) > 3:
            raise ValueError(f"expected at most 3 dimensions, got {len(dims)}")
        if min(dims) < 0:
            raise ValueError(f"negative dimension in {dims}")

    def reshape(self, new):
        raise NotImplementedError("reshape is not supported for sparse shapes")


def convert(x, dtype):
    if dtype not in ("int32", "float32"):
        raise TypeError(f"cannot convert {x!r} to dtype {dtype}")
    raise TypeError(f"cannot convert {x!r} to dtype {dtype.name}")
'''
TESTS = b'''\
import pytest

def test_dims():
    with pytest.raises(ValueError, match="got 5"):
        Shape().check([1] * 5)

def test_convert():
    with pytest.raises(TypeError, match=r"cannot convert .* to dtype int8"):
        convert(1, "int8")
'''
SHA = "1" * 40
PIN = Pin(source="example/lib", host="github.com", owner="example", name="lib", ref="v1", sha=SHA,
          web_url="https://github.com/example/lib")


