"""The conditions a raise runs under: else, elif, nested blocks, multi-line tests."""

CALLS = {
    "in_else": [{"ready": False}],
    "under_elif": [{"mode": "b"}],
    "in_final_else": [{"mode": "c"}],
    "nested_in_loop": [{"items": ["x"]}],
    "in_try": [{"strict": True}],
    "in_with": [{"strict": True}],
    "in_match": [{"strict": True, "value": 1}],
    "nested_ifs": [{"a": True, "b": True}],
    "multi_line_test": [{"first": 1, "second": 2}],
    "either": [{"flag": True}, {"flag": False}],
    "multi_line_placeholder": [{"items": [1, 2]}],
    "or_guard": [{"a": True, "b": True}],
}


def in_else(ready=True):
    if ready:
        return "ok"
    else:
        raise ValueError("not ready")


def under_elif(mode="a"):
    if mode == "a":
        return 1
    elif mode == "b":
        raise ValueError("mode b is gone")
    return 0


def in_final_else(mode="a"):
    if mode == "a":
        return 1
    elif mode == "b":
        return 2
    else:
        raise ValueError(f"unknown mode {mode}")


def nested_in_loop(items=()):
    if items:
        for item in items:
            raise ValueError(f"item {item} left over")


def in_try(strict=False):
    if strict:
        try:
            int("x")
        except ValueError:
            raise RuntimeError("strict parse failed") from None


def in_with(strict=False):
    import contextlib

    if strict:
        with contextlib.nullcontext():
            raise RuntimeError("strict inside with")


def in_match(strict=False, value=0):
    if strict:
        match value:
            case 1:
                raise ValueError("one is not allowed")


def nested_ifs(a=False, b=False):
    if a:
        if b:
            raise ValueError("both set")


def multi_line_test(first=0, second=0):
    if (first is not None and
            second > first):
        raise ValueError("second after first")


def either(flag=True):
    raise (ValueError("flag set") if flag else TypeError("flag clear"))


def multi_line_placeholder(items=()):
    if items:
        raise ValueError(f"""items: {sum(
            item
                for item in items)}""")


def or_guard(a=False, b=False):
    if a or b:
        if a and b:
            raise ValueError("a and b")
