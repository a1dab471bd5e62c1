"""How a repository's exception class turns the text a raise passes into `str(exc)`.

`compose` follows one raise through its class, as Python runs it:

1. the `__init__`s, from the nearest in the class's MRO: each binds what it was handed to its
   parameters and hands text on to the next (`super().__init__(...)` is the next class in the
   raised class's MRO that defines `__init__`; `Base.__init__(self, ...)` is Base's); a parameter
   shown as given (str(), no spec) takes the text bound to it, a local bound to `self.x` or
   `self.__class__.__name__` takes the class attribute's text or the class's name;
2. the text that reaches a builtin base becomes `args`; the nearest `__str__` of the repository
   (and the message methods it returns, `self.x` set in an `__init__`, class attributes) then
   makes the message, else BaseException's own str() of `args` does.

The result names the method whose text is outermost (`composed_by`). Where a step cannot be read
exactly (an argument that is not text, a `__str__` that returns what cannot be read, several
arguments reaching a builtin), the result says which method (`not_followed`), and the raise keeps
its own template. A class whose `__init__`s only hand the message on, with no `__str__`, is not
composed at all (None): its message is the raise's.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from crawler.catalogue.class_order import linearize, place
from crawler.parse.message.class_text import SEVERAL
from crawler.parse.message.pieces import MAX_ALTERNATIVES, Piece, merge_text
from crawler.parse.message.templates import build_template, pieces_of
from crawler.records import CallArgument, ClassDef, Template, TextSlot

if TYPE_CHECKING:
    from crawler.catalogue.classes import ClassIndex

MAX_CALLS = 4  # message methods a __str__ may go through


@dataclass(frozen=True)
class Composed:
    """What str(exc) shows for one raise: its templates, or the method that could not be read."""

    templates: tuple[Template, ...]
    composed_by: str | None
    not_followed: str | None = None
    display: str = "str"  # "repr": a KeyError's own __str__ shows the one argument's repr


class _NotFollowed(Exception):
    """A step of the class's transform cannot be read exactly; carries the method's name."""


class _Unknown(Exception):
    """A step this pass does not model (`*args` handed on): the raise is read as before."""


@dataclass
class _Run:
    """One raise followed through its class: the bindings met on the way."""

    index: ClassIndex
    raised: ClassDef
    mro: list[str]
    attributes: dict[str, list[list[Piece]] | None] = field(default_factory=dict)
    composed_by: str | None = None
    defined_at: str | None = None
    calls: int = 0
    args_set_by: str | None = None  # an __init__ that assigns self.args: what args hold is unknown


def compose(index: ClassIndex, raised: str, given: Template | None,
            arguments: tuple[CallArgument, ...] | None = None) -> Composed | None:
    """`str(exc)` of `raised(...)` whose message argument reads as `given` (None: no text).

    `arguments`, the call's as written, pick the branch of an `if P is None: P = ...` that runs.
    None when the class leaves the message as the raise reads it (no __init__ that changes it,
    no __str__), or hands on `*args`.
    """
    cls = index.classes.get(raised)
    if cls is None:
        return None
    run = _Run(index, cls, linearize(index, raised))
    try:
        args = _through_inits(run, given, arguments)
        shown = _through_str(run, args, given)
    except _NotFollowed as error:
        return Composed((), None, not_followed=str(error))
    except _Unknown:
        return None
    display = "str"
    if shown is None and run.args_set_by is not None:
        return Composed((), None, not_followed=run.args_set_by)
    if shown is None:  # BaseException.__str__ of the args
        if run.composed_by is None:
            return None  # the raise's own args, as the raise reads them
        if len(args) != 1 or args[0][0] != "0":
            return Composed((), None, not_followed=run.composed_by)
        shown = args[0][1]
        if "builtins.KeyError" in run.mro:
            display = "repr"
    if given is None and not any(p.text for pieces in shown for p in pieces
                                 if not p.is_placeholder):
        return Composed((), None, not_followed=run.composed_by)  # no text at all to show
    templates = tuple(build_template("class_default", pieces, defined_at=run.defined_at)
                      for pieces in _unique(shown))
    return Composed(templates, run.composed_by, display=display)


# ---------------------------------------------------------------- the __init__ chain

Args = list[tuple[str, list[list[Piece]]]]  # what a call hands on: (position or keyword, texts)


def _through_inits(run: _Run, given: Template | None,
                   arguments: tuple[CallArgument, ...] | None) -> Args:
    """The args that reach BaseException: the raise's own, or what the last __init__ hands on."""
    handed: Args = []
    raised_text = pieces_of(given) if given is not None else None
    if given is not None and given.argument is not None and raised_text is not None:
        handed = [(given.argument, [raised_text])]
    cls = _next_init(run, 0)
    states = _given_by_call(cls, arguments) if cls is not None else None
    first = cls
    for _ in range(len(run.mro) + 1):
        if cls is None:
            return handed
        env = _bind(cls, handed)
        if cls is first:
            env = {**_call_texts(cls, arguments, given), **env}
        if any(s.name == "args" for s in cls.self_attributes):
            run.args_set_by = f"{cls.qualname}.__init__"  # `self.args = ...`: not modelled
        if cls.init_target is None:
            run.attributes.update(_instance_attributes(run, cls, env, states))
            return handed  # no base __init__ called: args stay the raise's
        method = f"{cls.qualname}.__init__"
        if cls.init_target == SEVERAL:
            raise _NotFollowed(method)  # two base __init__s run: not modelled
        if any(slot.name == "*" for slot in cls.init_args):
            raise _Unknown
        init_args = [_branch(slot, states) for slot in cls.init_args]
        slots = [(slot.name, _fill_slot(run, slot, env, method)) for slot in init_args]
        if not all(_passes_on(slot, env) for slot in init_args) \
                or len(init_args) != len(handed):
            run.composed_by = method
            run.defined_at = run.defined_at or place(cls)
        run.attributes.update(_instance_attributes(run, cls, env, states))
        cls, handed = _following(run, cls), slots
        states = _given_by_slots(cls, slots) if cls is not None else None
    raise _NotFollowed(f"{run.raised.qualname}.__init__")


def _bind(cls: ClassDef, handed: Args) -> dict[str, list[list[Piece]]]:
    """The texts handed to an __init__, by its parameter names."""
    env = {}
    for key, texts in handed:
        if key.isdigit():
            if int(key) < len(cls.params):
                env[cls.params[int(key)]] = texts
        elif key in cls.params or key in cls.keywords:
            env[key] = texts
    return env


def _given_by_call(cls: ClassDef, arguments: tuple[CallArgument, ...] | None
                   ) -> dict[str, bool] | None:
    """Which of an __init__'s parameters the raise gives a value other than None (True) and
    which it leaves None, omitted or a literal None (False); None where that is not known."""
    if arguments is None or any(a.keyword in ("*", "**") for a in arguments):
        return None
    states = dict.fromkeys((*cls.params, *cls.keywords), False)
    positional = [a for a in arguments if a.keyword is None]
    for name, argument in zip(cls.params, positional):
        states[name] = not (argument.literal and argument.source == "None")
    for argument in arguments:
        if argument.keyword in states:
            states[argument.keyword] = not (argument.literal and argument.source == "None")
    return states


def _call_texts(cls: ClassDef, arguments: tuple[CallArgument, ...] | None,
                given: Template | None) -> dict[str, list[list[Piece]]]:
    """The raise's other arguments that are text to the class: literal text, as it is, and
    the expression given for a parameter an `if P is None:` fills, by its source."""
    guarded = {slot.if_none for slot in (*cls.init_args, *cls.self_attributes)} - {None}
    found: dict[str, list[list[Piece]]] = {}
    positional = [a for a in (arguments or ()) if a.keyword is None]
    keyed = [(a.keyword, a) for a in (arguments or ()) if a.keyword not in (None, "*", "**")]
    for name, argument in [*zip(cls.params, positional), *keyed]:
        assert name is not None
        text = _literal_text(argument)
        if text is not None:
            found[name] = [[Piece(text)]]
        elif name in guarded and not argument.literal:
            found[name] = [[Piece(argument.source, True)]]
    return found


def _literal_text(argument: CallArgument) -> str | None:
    if not argument.literal:
        return None
    try:
        value = ast.literal_eval(argument.source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _given_by_slots(cls: ClassDef, handed: Args) -> dict[str, bool]:
    """The same for an __init__ that a class's own __init__ calls, from what it hands on."""
    states = dict.fromkeys((*cls.params, *cls.keywords), False)
    for name, texts in _bind(cls, handed).items():
        states[name] = texts != [[Piece("None", True)]]
    return states


def _branch(slot: TextSlot, states: dict[str, bool] | None) -> TextSlot:
    """A slot read through `if P is None: P = ...`, cut to the branch the call runs."""
    if slot.if_none is None or states is None or slot.if_none not in states:
        return slot
    own = "{" + slot.if_none + "}"
    kept = tuple(t for t in slot.templates if (t.template == own) == states[slot.if_none])
    return replace(slot, templates=kept) if kept else slot


def _passes_on(slot: TextSlot, env: dict[str, list[list[Piece]]]) -> bool:
    """The slot is one bound parameter, handed on as it came."""
    return (len(slot.templates) == 1 and len(slot.templates[0].placeholders) == 1
            and slot.templates[0].template == "{" + slot.templates[0].placeholders[0] + "}"
            and slot.templates[0].placeholders[0] in env)


def _following(run: _Run, cls: ClassDef) -> ClassDef | None:
    """The repository __init__ that `cls`'s own calls; None: a builtin's or another package's."""
    if cls.init_target == "super":
        if cls.qualname not in run.mro:
            raise _NotFollowed(f"{cls.qualname}.__init__")
        return _next_init(run, run.mro.index(cls.qualname) + 1)
    assert cls.init_target is not None
    target = run.index.canonical(cls.init_target)
    if target not in run.index.classes:
        return None
    order = linearize(run.index, target)
    found = _first_init(run.index, order, 0)
    return found


def _next_init(run: _Run, start: int) -> ClassDef | None:
    return _first_init(run.index, run.mro, start)


def _first_init(index: ClassIndex, order: list[str], start: int) -> ClassDef | None:
    """The first class from `start` on that defines __init__; None at a class not ours."""
    for qualname in order[start:]:
        cls = index.classes.get(qualname)
        if cls is None:
            return None
        if cls.has_init:
            return cls
    return None


def _instance_attributes(run: _Run, cls: ClassDef, env: dict[str, list[list[Piece]]],
                         states: dict[str, bool] | None) -> dict[str, list[list[Piece]] | None]:
    """`self.x = ...` of one __init__, filled in; an attribute set twice is not known."""
    found: dict[str, list[list[Piece]] | None] = {}
    for slot in (_branch(s, states) for s in cls.self_attributes):
        if slot.name in found or slot.name in run.attributes:
            found[slot.name] = None
            continue
        try:
            found[slot.name] = _fill_slot(run, slot, env, f"{cls.qualname}.__init__")
        except _NotFollowed:
            found[slot.name] = None
    return found


# ---------------------------------------------------------------- __str__


def _through_str(run: _Run, args: Args | None, given: Template | None
                 ) -> list[list[Piece]] | None:
    """The message as the nearest repository `__str__` makes it; None: BaseException's."""
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        slot = _method(cls, "__str__()")
        if slot is not None:
            method = f"{cls.qualname}.__str__"
            texts = _fill_slot(run, slot, {}, method, args, strict=True)
            if given is not None and not _shows(texts, given):
                raise _NotFollowed(method)  # the raise's text went where this pass lost it
            run.composed_by = method
            run.defined_at = run.defined_at or place(cls)
            return texts
    return None


def _shows(texts: list[list[Piece]], given: Template) -> bool:
    """Some alternative holds the raise's own template, when the raise has literal text."""
    pieces = pieces_of(given) or []
    if not any(p.text for p in pieces if not p.is_placeholder):
        return True  # no literal text of its own to keep
    return any(given.template in build_template("literal", option).template for option in texts)


def _method(cls: ClassDef, name: str) -> TextSlot | None:
    return next((slot for slot in cls.methods if slot.name == name), None)


# ---------------------------------------------------------------- filling placeholders


def _fill_slot(run: _Run, slot: TextSlot, env: dict[str, list[list[Piece]]], method: str,
               args: Args | None = None, strict: bool = False) -> list[list[Piece]]:
    """Every alternative of a slot with its placeholders filled; raises _NotFollowed.

    A placeholder nothing fills stays as it is, named by its expression: exact, if vague. But
    an expression that cannot be read and takes the raise's text (`format_error(message)`), or
    any that cannot be read in a `__str__` (`strict`), would hide the message: not followed.
    """
    aliases = dict(slot.aliases)
    filled: list[list[Piece]] = []
    for template in slot.templates:
        pieces = pieces_of(template)
        if pieces is None:
            raise _NotFollowed(method)
        options: list[list[Piece]] = [[]]
        for piece in pieces:
            choices = [[piece]]
            if piece.is_placeholder:
                value = _value(run, piece.text, env, aliases, args) \
                    if piece.text in slot.verbatim else None
                if value is not None:
                    choices = value
                elif template.kind == "dynamic" and (strict or _takes(piece.text, env)):
                    raise _NotFollowed(method)
            options = [done + more for done in options for more in choices]
            if len(options) > MAX_ALTERNATIVES:
                raise _NotFollowed(method)
        filled += [merge_text(option) for option in options]
    return filled


def _takes(expression: str, env: dict[str, list[list[Piece]]]) -> bool:
    """The expression reads one of the parameters bound to text."""
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", expression) for name in env)


def _value(run: _Run, name: str, env: dict[str, list[list[Piece]]], aliases: dict[str, str],
           args: Args | None) -> list[list[Piece]] | None:
    """The texts a placeholder stands for, when the class says; None: it stays a placeholder."""
    if name in env:
        return env[name]
    expression = aliases.get(name, name)
    if expression in ("self.__class__.__name__", "type(self).__name__"):
        return [[Piece(run.raised.name)]]
    if expression in ("super().__str__()", "str(self.args[0])", "self.args[0]") \
            or expression.endswith(".__str__(self)"):
        if run.args_set_by is not None:
            raise _NotFollowed(run.args_set_by)
        if args is not None and len(args) == 1 and args[0][0] == "0":
            return args[0][1]
        return None
    if expression.startswith("self.") and expression.endswith("()"):
        return _call(run, expression[5:], args)
    if expression.startswith("self.") and expression[5:].isidentifier():
        return _attribute(run, expression[5:], args)
    owner, dot, name = expression.partition(".")
    if dot and owner.isidentifier() and name.isidentifier():
        return _named_class_attribute(run, owner, name)
    return None


def _named_class_attribute(run: _Run, owner: str, name: str) -> list[list[Piece]] | None:
    """`Owner.name` where `Owner` is a class of the raised class's MRO, by its own name: the
    class attribute as `Owner` has it, its own or a base's (never a subclass's, nor `self`'s)."""
    names = [getattr(run.index.classes.get(q), "name", None) for q in run.mro]
    if owner not in names:
        return None
    for qualname in run.mro[names.index(owner):]:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        text = _class_attribute(cls, name)
        if text is not None:
            return text
    return None


def _attribute(run: _Run, name: str, args: Args | None) -> list[list[Piece]] | None:
    """`self.name`: set by an __init__ on the way, else a class attribute, else a property."""
    if name in run.attributes:
        return run.attributes[name]
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        text = _class_attribute(cls, name)
        if text is not None:
            return text
        if _method(cls, name) is not None:  # a property
            return _call(run, name, args)
    return None


def _class_attribute(cls: ClassDef, name: str) -> list[list[Piece]] | None:
    """The texts of the class's own text attribute `name` (a class-body assignment)."""
    attribute = next((s for s in cls.class_attributes if s.name == name), None)
    return None if attribute is None else [pieces_of(t) or [Piece(t.template)]
                                           for t in attribute.templates]


def _call(run: _Run, name: str, args: Args | None) -> list[list[Piece]] | None:
    """`self.name()` (`name` ends in "()") or a property: the returns of the nearest message
    method of that name."""
    if run.calls >= MAX_CALLS:
        return None
    run.calls += 1
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        slot = _method(cls, name)
        if slot is not None:
            try:
                method = f"{cls.qualname}.{name.removesuffix('()')}"
                return _fill_slot(run, slot, {}, method, args, strict=True)
            except _NotFollowed:
                return None
    return None


# ---------------------------------------------------------------- helpers


def _unique(alternatives: list[list[Piece]]) -> list[list[Piece]]:
    seen: list[list[Piece]] = []
    for pieces in alternatives:
        if pieces not in seen:
            seen.append(pieces)
    return seen

