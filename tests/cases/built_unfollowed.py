"""Messages built in ways not followed: each stays `dynamic`, and its record says why."""


def assigned_in_loop(names=("a", "b")):
    msg = "none"
    for name in names:
        msg = f"last name {name}"
    raise ValueError(msg)


def loop_with_break(names=("a", "b")):
    msg = "names:"
    for name in names:
        if name == "stop":
            break
        msg += f" {name}"
    raise ValueError(msg)


def _add_hint(parts):
    parts.append("a hint")


def list_passed_on(name="x"):
    msg = [f"bad {name}"]
    _add_hint(msg)
    raise ValueError("\n".join(msg))


def given_list_first(fix=("try again",)):
    raise ValueError("\n".join(list(fix) + ["and then give up"]))


def value_message(dtype="int4"):
    raise NotImplementedError(dtype.upper())
