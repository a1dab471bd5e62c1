"""The rules the message reader applies, each named once, and a trace of those a read went through.

`RULES` names every idiom the reader turns into text (its id, then what it reads): the list
issue 47's rewrite must cover with one general evaluator. Each rule's real examples, the code
it accepts and the code it rejects (or reads as `dynamic`, with the record's reason), are kept
beside it in `rule_examples.yaml`, which one test harness reads with the real reader.

The reader calls `note(rule)` where a rule gives text. Nothing is kept unless a trace is open
(`tracing`), so an extract pays one call that returns at once; a read that fails drops what it
noted (`mark`, `drop`), and so does a message read as `dynamic`. `scripts/rule_use.py` opens a
trace around each raise statement (`at_raise`) to count which rules each record used.

This module imports nothing of LibCST: the crawler's own process may import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

RULES: dict[str, str] = {
    # reading: one expression to text (`reading.Reader`)
    "text.literal": "a string literal, or adjacent literals, is its text",
    "text.fstring": "an f-string: its literal runs, each `{expr}` a placeholder named by `expr`",
    "text.concat": "`a + b` of text: each operand's text, `str(x)`/`repr(x)` named by `x`",
    "text.percent": "`'...' % values`: each `%` field filled by its value (tuple, dict, one value)",
    "text.format": "`'...'.format(...)`: each field filled by its argument",
    "text.bound-format": "`msg = '...'.format` then `msg(x)`: read as `'...'.format(x)`",
    "text.repeat": "`'-' * 30`: a literal repeated a literal number of times",
    "text.conditional": "`a if c else b`: one template for each branch",
    "text.gettext": "`_('...')`, `gettext`, `pgettext` and friends: the text they translate",
    "text.ngettext": "`ngettext(one, many, n)`: one template for each form",
    "text.whitespace": "`.strip()`, `textwrap.dedent`, `inspect.cleandoc` of text: applied",
    "text.join-display": "`sep.join([a, b])` over a list or tuple display: items with `sep`",
    "text.join-built": "`sep.join(items)` over a list built by `append`/`extend`/`+=`, in loops too",
    "text.cut-tail": "`text[:-n]`: the last `n` literal characters cut",
    # flow: a name to the assignments that reach the raise (`flow.definitions`)
    "flow.assignment": "a local name read through the assignment that reaches the raise",
    "flow.branches": "a name assigned in several branches (`if`/`else`, `try` handlers): each one",
    "flow.augmented-assignment": "`msg += text`: what reached it, then the text added",
    "flow.loop": "a loop that only adds to the name: its pass repeated any number of times",
    "flow.walrus-test": "`if (msg := f(x)):` then `raise E(msg)`: the value the test binds",
    "flow.opaque-binding": "a name bound by unpacking or `with ... as`: its own placeholder",
    "flow.merged-paths": "more paths than templates allow: parts some paths add made optional",
    "flow.fstring-local": "`{name}` of an f-string where one definition made as text reaches it:"
                          " that text in place",
    # calls: the module's own code followed (`calls.Follower`)
    "call.constant": "a module constant bound once at the top level: its value's text",
    "call.helper": "a helper of the module: the text it returns, its parameters substituted",
    "call.factory": "`raise make_error(...)`: the exceptions a module function returns",
    "call.local-lambda": "`err = lambda n: E(f'...')` then `raise err(x)`: the lambda's exception",
    "call.yielded-lambdas": "`e = next(gen(...))`: the lambdas the module's generator yields",
    "raise.made-on-a-path": "`raise e` of a name: each exception made by a class's call on a path"
                            " to it (`site_records`)",
    # the repository-wide passes (`crawler.catalogue`), read off the record by `rule_use.py`
    "call.other-module": "a helper or factory of another module (`catalogue.factories`)",
    "call.callers": "a message that is a parameter: the text each caller passes "
                    "(`catalogue.callers`)",
    # classes: what a class statement does to its message (`class_text`, `class_records`)
    "class.init-message": "an `__init__` that passes text to its base: the class's message",
    "class.str-method": "a `__str__` (or message method) that returns text: the class's message"
                        " (the paths the raise's call runs, by the `if` tests they decide)",
    "class.default-message": "a class attribute (`message = '...'`) a base's `__init__` prints",
}
# `class.*` rules are read in the worker (`class_records`) and composed by `catalogue.classes`.


_used: set[str] | None = None  # the rules the current raise statement used, while tracing
_by_raise: list[tuple[int, set[str]]] | None = None  # each raise statement's line and rules


def note(rule: str) -> None:
    """`rule` gave text for the read in progress (kept only while a trace is open)."""
    if _used is not None:
        _used.add(rule)


def active() -> bool:
    """Whether a trace is open (a caller computes what to note only then)."""
    return _used is not None


def mark() -> frozenset[str] | None:
    """What has been noted so far, to `drop` back to when a read fails."""
    return frozenset(_used) if _used is not None else None


def drop(marked: frozenset[str] | None) -> None:
    """Forget what was noted since `marked`: the read it belongs to gave no text."""
    if _used is not None and marked is not None:
        _used.intersection_update(marked)


def at_raise(line: int) -> None:
    """A raise statement's reading starts: what follows is noted for it (while tracing)."""
    global _used
    if _by_raise is not None:
        _used = set()
        _by_raise.append((line, _used))


@contextmanager
def tracing() -> Iterator[list[tuple[int, set[str]]]]:
    """Note the rules each raise statement read in this block uses: (line, rule ids) in order.
    What is read outside a raise statement (a class's own message) is noted under line 0."""
    global _used, _by_raise
    outer = _used, _by_raise
    _by_raise = []
    _used = set()
    _by_raise.append((0, _used))
    try:
        yield _by_raise
    finally:
        _used, _by_raise = outer
