"""Constants at a call, and the simple guards of raises: how the entry-point pass sees that a
library's own call cannot reach a raise (`get_current_context(silent=True)` and a raise under
`if not silent:`).

Read per file, with the call edges (`crawler.parse.call_edges`), as text that rides in a
function's calls (so the result cache keeps it as it keeps every call):

- a direct call's arguments (`call_args`): how many positional arguments it passes, whether it
  unpacks `*args`/`**kwargs`, the keywords it names, the constant ones (`True`, `False`, `None`,
  numbers, short strings) by position or keyword, and the caller's own parameters it passes
  straight through (never reassigned in the caller), and the ones that are a class
  (`x.__class__`, `type(x)`, or a local stored once from one) or a bool (`not x`, `a is b`);
- a function's signature (`signature`), for functions with a guard or a pass-through and for
  every `__call__`: its positional and keyword-only parameters, the constant defaults, whether
  the call supplies its first parameter (`self`, `cls`), whether its decorators keep its
  signature as written, and what it takes (`accepts`: the arity of a held callable's call);
- each raise's guard (`guards`): the conjunction of the simple tests on the function's own
  (never reassigned) parameters that must hold for the raise to run: the `if`/`elif` tests
  around it (`p`, `not p`, `p is None`, `p is not None`, `p == CONST`, `p != CONST`, `p < N`
  and the other orders against a number, `p in (CONST, ...)` and `not in`,
  `isinstance(p, T)` for T among type, bool, int, float, str, and
  `and`/`or`/`not` of those; negated in an `else`), and an early exit before it in the same
  block or an enclosing one (`if silent: return None`). Of a test that is not simple, only
  what it implies is kept: the simple parts of an `and` that holds (`if cmp is not None and
  any(...)` keeps `cmp is not None`), of an `or` that fails. Anything else is left out of the
  conjunction, which only weakens it: such a raise is reached as before.

`reduce` weighs a guard against one call's constants (three-valued: a parameter the call leaves
unknown makes its test unknown); a guard that is false cannot run for that call.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from crawler.parse.python_ast import parse_expression

# decorators that keep a function's signature as written (by their last dotted name)
KEEPS_SIGNATURE = frozenset({"staticmethod", "classmethod", "property", "cached_property",
                             "abstractmethod", "overload", "wraps", "contextmanager", "override",
                             "final", "setter", "getter", "deleter", "lru_cache", "cache"})
_TYPES = {"type": type, "bool": bool, "int": int, "float": float, "str": str}
_NO_ARGUMENTS = "[0,0,[],[],[],[]]"
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# `json.dumps(..., separators=(",", ":"))` made once: `dumps` builds a new encoder for every call
# given a separator, and a file's calls are many
_COMPACT = json.JSONEncoder(separators=(",", ":"))
Bound = tuple[str, object]  # ("c", a constant) or ("p", the caller's parameter passed through)


def constant(node: ast.expr) -> tuple[bool, object]:
    """Whether an argument is a constant the pass weighs, and its value."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return True, -node.operand.value  # type: ignore[operator]
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or type(value) in (bool, int, float) or (type(value) is str and len(value) <= 60):
            return True, value
    return False, None


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    args = node.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


# The node classes `known_names` reads, by what they say (the parser makes no subclasses of them).
_NAMING: dict[type, str] = {
    ast.Name: "name", ast.arg: "arg", ast.FunctionDef: "def", ast.AsyncFunctionDef: "def",
    ast.ClassDef: "def", ast.Raise: "raise", ast.Nonlocal: "declared", ast.Global: "declared",
    ast.Assign: "assign"}


def known_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, nodes: list[ast.AST]
                ) -> tuple[set[str], dict[str, str], bool]:
    """In one pass over a function's nodes: the names it binds (stored, its parameters and
    those of what it nests, its defs); what its names are known to hold: its parameters that
    it (nested scopes too) never stores, deletes or declares nonlocal/global ("p"), those it
    first stores at line N ("s:N": the argument until then), and the locals stored once, from
    a class (`type_ = type(cls)`: "t"); and whether it holds a `raise`."""
    bound: set[str] = set()
    stores: dict[str, int] = {}
    first: dict[str, int] = {}
    classes: set[str] = set()
    raises = False
    for inner in nodes:
        kind = _NAMING.get(inner.__class__)  # most nodes name nothing: one look-up each
        if kind is None:
            continue
        if kind == "name":
            if inner.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                name, line = inner.id, inner.lineno  # type: ignore[attr-defined]
                bound.add(name)
                stores[name] = stores.get(name, 0) + 1
                first[name] = min(first.get(name, line), line)
        elif kind == "arg":
            bound.add(inner.arg)  # type: ignore[attr-defined]
        elif kind == "def":
            if inner is not node:
                bound.add(inner.name)  # type: ignore[attr-defined]
        elif kind == "raise":
            raises = True
        elif kind == "declared":
            stores.update((name, 2) for name in inner.names)  # type: ignore[attr-defined]
            first.update((name, 0) for name in inner.names)  # type: ignore[attr-defined]
        else:  # an assignment
            assert isinstance(inner, ast.Assign)
            if len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Name) \
                    and is_class(inner.value):
                classes.add(inner.targets[0].id)
    known = {name: f"s:{first[name]}" if name in stores else "p" for name in parameters(node)}
    known.update((name, "t") for name in classes if stores.get(name) == 1 and name not in known)
    return bound, known, raises


def call_args(node: ast.Call, known: dict[str, str]) -> str:
    """A direct call's arguments as JSON: [positional count, unpacks, keywords named,
    [[position or keyword, constant]], [[position or keyword, "t" a class or "b" a bool]],
    [[position or keyword, caller's parameter]]] (so it ends `,[]]` when it passes none)."""
    if not node.args and not node.keywords:
        return _NO_ARGUMENTS
    count, unpacks = 0, False
    named: list[str] = []
    constants: list[list[object]] = []
    passed: list[list[object]] = []
    kinds: list[list[int | str]] = []
    keyed: list[tuple[int | str, ast.expr]] = []
    for argument in node.args:
        if isinstance(argument, ast.Starred):
            unpacks = True
            break
        keyed.append((count, argument))
        count += 1
    for keyword in node.keywords:
        if keyword.arg is None:
            unpacks = True
        else:
            named.append(keyword.arg)
            keyed.append((keyword.arg, keyword.value))
    for key, value in keyed:
        is_constant, const = constant(value)
        if is_constant:
            constants.append([key, const])
        elif isinstance(value, ast.Name) and known.get(value.id) == "p":
            passed.append([key, value.id])
        elif is_class(value) or isinstance(value, ast.Name) and known.get(value.id) == "t":
            kinds.append([key, "t"])
        elif is_bool(value):
            kinds.append([key, "b"])
    if not (named or constants or kinds or passed):  # most calls: what the encoder would write
        return f"[{count},{int(unpacks)},[],[],[],[]]"
    return _COMPACT.encode([count, int(unpacks), named, constants, kinds, passed])


def is_bool(node: ast.expr) -> bool:
    """`not x`, `a is b`, `a in b`: a bool, whatever the operands (`==` may give anything)."""
    if isinstance(node, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)


def is_class(node: ast.expr) -> bool:
    """`x.__class__` or `type(x)`: a class, whatever x is."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
        and len(node.args) == 1 and not node.keywords


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, method: bool) -> str:
    """JSON: [positional parameters, keyword-only ones, {parameter: constant default}, what
    supplies the first (0: the caller, 1: an instance or class called, 2: a classmethod's
    class), whether the decorators keep the signature, how many positional parameters have a
    default, whether it takes `*args`, `**kwargs`, its keyword-only parameters without one]."""
    args = node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    defaults: dict[str, object] = {}
    for name, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        known, value = constant(default)
        if known:
            defaults[name] = value
    for arg, given in zip(args.kwonlyargs, args.kw_defaults):
        known, value = constant(given) if given is not None else (False, None)
        if known:
            defaults[arg.arg] = value
    decorators = [] if isinstance(node, ast.Lambda) else [_decorator_name(d) for d in node.decorator_list]
    keeps = all(d in KEEPS_SIGNATURE for d in decorators)
    bound = method * (2 if "classmethod" in decorators else 1)
    required = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return _COMPACT.encode([positional, [a.arg for a in args.kwonlyargs], defaults, bound, int(keeps),
                            len(args.defaults), int(args.vararg is not None),
                            int(args.kwarg is not None), required])


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def guards(node: ast.FunctionDef | ast.AsyncFunctionDef, known: dict[str, str]) -> list[tuple[int, str]]:
    """Each raise of the function's own body that has a simple guard: (its line, the guard).
    A parameter the function stores is read only for a raise before its first store, and
    outside a loop."""
    stored = {name: int(kind[2:]) for name, kind in known.items() if kind.startswith("s:")}
    usable = frozenset(name for name, kind in known.items() if kind == "p" or kind.startswith("s:"))
    found: list[tuple[int, str]] = []
    Held = list[tuple[str, frozenset[str]]]  # a test's outcome, the stored parameters it reads

    def held_of(test: ast.expr, outcome: bool) -> Held:
        text = holds(test, usable, outcome)
        if not text:
            return []
        reads = frozenset(n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in stored) \
            if stored else frozenset()
        return [(text, reads)]

    def block(statements: list[ast.stmt], held: Held, looping: bool) -> None:
        held = list(held)
        for statement in statements:
            visit(statement, held, looping)
            if isinstance(statement, ast.If) and statement.body and isinstance(statement.body[-1], _EXITS):
                held.extend(held_of(statement.test, False))  # what runs after it

    def visit(statement: ast.stmt, held: Held, looping: bool) -> None:
        if isinstance(statement, ast.Raise):
            line = statement.lineno
            kept = [text for text, reads in held
                    if not reads or not looping and all(stored[n] > line for n in reads)]
            if kept:
                found.append((line, " and ".join(f"({h})" for h in kept)))
        elif isinstance(statement, ast.If):
            block(statement.body, [*held, *held_of(statement.test, True)], looping)
            block(statement.orelse, [*held, *held_of(statement.test, False)], looping)
        elif not isinstance(statement, _NESTED):
            looping = looping or isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
            for field in ("body", "orelse", "finalbody"):
                block(getattr(statement, field, []), held, looping)
            for handler in getattr(statement, "handlers", []):
                block(handler.body, held, looping)

    block(node.body, [], False)
    return found


def call_facts(node: ast.FunctionDef | ast.AsyncFunctionDef, known: dict[str, str],
               lines: frozenset[int]) -> list[tuple[int, str]]:
    """What the function's own tests have settled of its parameters where it calls out: at each
    line holding a call, the conjunction of the simple tests that hold there (the `if` branches
    it sits in, and each `if T: return/raise/...` before it, false), over the parameters it
    never stores. A call its caller makes only after `if n < 1: raise ...` passes an `n` of at
    least 1, so a callee's `if n < 0: raise` cannot run for it (`settled`); and a callee it
    calls only under `if option == "align":` is reached only where its own callers can pass
    such an option. Only the `lines` asked for (those holding a call) are read."""
    usable = frozenset(name for name, kind in known.items() if kind == "p")
    found: dict[int, str] = {}

    def note(inner: ast.AST, held: list[str]) -> None:
        first, last = getattr(inner, "lineno", 0), getattr(inner, "end_lineno", None) or 0
        if held and any(first <= line <= last for line in lines):
            text = " and ".join(f"({h})" for h in held)
            for call in ast.walk(inner):
                if isinstance(call, ast.Call) and call.lineno in lines:
                    found.setdefault(call.lineno, text)  # two calls on a line: the first's facts

    def block(statements: list[ast.stmt], held: list[str]) -> None:
        held = list(held)
        for statement in statements:
            visit(statement, held)
            if isinstance(statement, ast.If) and statement.body and isinstance(statement.body[-1], _EXITS):
                text = holds(statement.test, usable, False)
                held.extend([text] if text else [])  # what runs after it

    def visit(statement: ast.stmt, held: list[str]) -> None:
        if isinstance(statement, _NESTED):
            return
        if isinstance(statement, ast.If):
            note(statement.test, held)
            for branch, outcome in ((statement.body, True), (statement.orelse, False)):
                text = holds(statement.test, usable, outcome)
                block(branch, [*held, *([text] if text else [])])
            return
        blocks = ("body", "orelse", "finalbody", "handlers")
        for field, value in ast.iter_fields(statement) if held else ():  # no test held: no note
            if field not in blocks and isinstance(value, ast.AST):
                note(value, held)
            elif field not in blocks and isinstance(value, list):
                for item in value:
                    note(item, held) if isinstance(item, ast.AST) else None
        for field in blocks[:3]:
            block(getattr(statement, field, []), held)
        for handler in getattr(statement, "handlers", []):
            block(handler.body, held)

    if usable:
        block(node.body, [])
    return sorted(found.items())


def settled(guard: ast.expr, facts: ast.expr) -> bool | None:
    """The guard where the facts hold: False when no value of its parameters makes both true,
    each parameter tried at the values that tell its tests apart (the constants they name, the
    numbers on either side of each, None, the bools, strings, a class, other objects) and every
    test run as Python runs it (`x < 1` of a string raises, so no path goes on from it; `and`
    and `or` stop early); None when some value may. A parameter of the facts that the guard does
    not test may be anything; a guard of more than two parameters is left open."""
    names = sorted({n.id for n in ast.walk(guard) if isinstance(n, ast.Name)} - _KNOWN_NAMES)
    if not names or len(names) > 2:
        return None
    both = ast.BoolOp(ast.And(), [facts, guard])
    tried = [_values(name, both) for name in names]
    for first in tried[0]:
        for second in tried[1] if len(names) == 2 else [None]:
            env = dict(zip(names, (first, second)))
            if _TRUE in _outcomes(facts, env) and _TRUE in _outcomes(guard, env):
                return None
    return False


_KNOWN_NAMES = frozenset({"None", "True", "False", "isinstance", *_TYPES})
_TRUE, _FALSE, _RAISES = "true", "false", "raises"
_ANY = frozenset({_TRUE, _FALSE, _RAISES})


def _outcomes(test: ast.expr, env: dict[str, object]) -> frozenset[str]:
    """What a simple test can give for the values in `env` (a name not in it: anything)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        flipped = {_TRUE: _FALSE, _FALSE: _TRUE, _RAISES: _RAISES}
        return frozenset(flipped[o] for o in _outcomes(test.operand, env))
    if isinstance(test, ast.BoolOp):  # evaluated left to right, stopping early
        stops, goes_on = (_FALSE, _TRUE) if isinstance(test.op, ast.And) else (_TRUE, _FALSE)
        found: set[str] = set()
        for part in test.values:
            outcomes = _outcomes(part, env)
            found.update(outcomes - {goes_on})
            if goes_on not in outcomes:
                return frozenset(found)
        return frozenset(found | {goes_on})
    subject = test if isinstance(test, ast.Name) else test.args[0] if isinstance(test, ast.Call) \
        else test.left if isinstance(test, ast.Compare) else None
    if not isinstance(subject, ast.Name) or subject.id not in env:
        return _ANY
    value = env[subject.id]
    try:
        if isinstance(test, ast.Name):
            held = bool(value)
        elif isinstance(test, ast.Call):
            held = isinstance(value, _TYPES[ast.unparse(test.args[1])])
        else:
            assert isinstance(test, ast.Compare)
            op, other = test.ops[0], test.comparators[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                members = [constant(e)[1] for e in other.elts]  # type: ignore[attr-defined]
                held = (value in members) == isinstance(op, ast.In)
            else:
                held = _COMPARED[type(op)](value, constant(other)[1])
    except TypeError:  # `"a" < 1`: Python raises where the test runs
        return frozenset({_RAISES})
    return frozenset({_TRUE if held else _FALSE})


_COMPARED: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _values(name: str, test: ast.expr) -> list[object]:
    """The values that tell apart every simple test of `name` in `test`."""
    found: list[object] = [None, True, False, 0, 1, -1, 0.5, 10 ** 18, -10 ** 18, "", "\x00other",
                           int, (), (0,)]
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == name:
            other = node.comparators[0]
            elements = other.elts if isinstance(other, (ast.Tuple, ast.List, ast.Set)) else [other]
            for element in elements:
                known, value = constant(element)
                if not known:
                    continue
                found.append(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found.extend([value - 1, value + 1, value - 0.5, value + 0.5])
    return _distinct(found)


def _distinct(values: list[object]) -> list[object]:
    """Each value once (`1` and `True` are equal, yet tell tests apart: both kept)."""
    seen: set[tuple[type, object]] = set()
    kept = []
    for value in values:
        key = (type(value), value if not isinstance(value, type) else id(value))
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def holds(test: ast.expr, usable: frozenset[str], outcome: bool) -> str | None:
    """What a test's outcome says of the parameters, as far as the pass reads it: the test
    itself when simple; else, of `A and B` true (or `A or B` false), the parts that are."""
    if simple(test, usable):
        return ast.unparse(test) if outcome else f"not ({ast.unparse(test)})"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return holds(test.operand, usable, not outcome)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if outcome else ast.Or):
        kept = [p for p in (holds(v, usable, outcome) for v in test.values) if p]
        return " and ".join(f"({p})" for p in kept) or None
    return None


def simple(test: ast.expr, usable: frozenset[str]) -> bool:
    """A test of the function's parameters against constants, as the pass weighs it."""
    if isinstance(test, ast.BoolOp):
        return all(simple(v, usable) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return simple(test.operand, usable)
    if isinstance(test, ast.Name):
        return test.id in usable
    if isinstance(test, ast.Call):  # isinstance(p, type), isinstance(p, bool)...
        # `ast.unparse(test.func) == "isinstance"` asked without unparsing every call's callee:
        # only a name unparses to a bare word
        return isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and not test.keywords \
            and isinstance(test.args[0], ast.Name) and test.args[0].id in usable \
            and ast.unparse(test.args[1]) in _TYPES
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and test.left.id in usable:
        op, other = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)):  # `mode not in ("r", "w")`
            return isinstance(other, (ast.Tuple, ast.List, ast.Set)) \
                and all(constant(e)[0] for e in other.elts)
        known, value = constant(other)
        if isinstance(op, (ast.Is, ast.IsNot)):
            return known and value in (None, True, False) and type(value) is not int
        if isinstance(op, _ORDER):  # `step < 1`, `n >= 0`: against a number
            return known and type(value) in (int, float)
        return known and isinstance(op, (ast.Eq, ast.NotEq))
    return False


_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@lru_cache(maxsize=4096)
def parsed(text: str) -> ast.expr:
    return parse_expression(text)


def reduce(test: ast.expr, env: dict[str, Bound]) -> bool | None | str:
    """The guard for one call: True/False when its constants decide it, None when unknown, or
    the guard over the caller's parameters it passes straight through (text)."""
    if isinstance(test, ast.BoolOp):
        parts = [reduce(v, env) for v in test.values]
        rest = [p for p in parts if isinstance(p, str)]
        if isinstance(test.op, ast.And):
            if False in parts:
                return False
            return " and ".join(f"({p})" for p in rest) if rest else None if None in parts else True
        if True in parts:
            return True
        if None in parts:
            return None
        return " or ".join(f"({p})" for p in rest) if rest else False
    if isinstance(test, ast.UnaryOp):
        inner = reduce(test.operand, env)
        return f"not ({inner})" if isinstance(inner, str) else None if inner is None else not inner
    return _atom(test, env)


def _atom(test: ast.expr, env: dict[str, Bound]) -> bool | None | str:
    """`p`, `p is None`, `p == CONST`... or `isinstance(p, T)` for one call."""
    subject: ast.expr
    if isinstance(test, ast.Name):
        subject, build = test, lambda n: n
    elif isinstance(test, ast.Call):
        subject, build = test.args[0], lambda n: ast.Call(test.func, [n, test.args[1]], [])
    else:
        assert isinstance(test, ast.Compare)
        subject, build = test.left, lambda n: ast.Compare(n, test.ops, test.comparators)
    assert isinstance(subject, ast.Name)
    kind, value = env.get(subject.id, ("", None))
    if kind == "p":  # passed straight through: the same test of the caller's parameter
        return ast.unparse(build(ast.Name(str(value))))
    if not kind:
        return None
    if isinstance(test, ast.Call):  # a class is an instance of type only; a bool, of bool and int
        wanted = _TYPES[ast.unparse(test.args[1])]
        return isinstance(value, wanted) if kind == "c" else wanted is type if kind == "t" \
            else wanted in (bool, int)
    if isinstance(test, ast.Name):
        return bool(value) if kind == "c" else None  # a class's or a bool's truth is left open
    op = test.ops[0]  # type: ignore[attr-defined]
    if isinstance(op, (ast.In, ast.NotIn)):
        if kind != "c":
            return None
        members = [constant(e)[1] for e in test.comparators[0].elts]  # type: ignore[attr-defined]
        return (value in members) == isinstance(op, ast.In)
    other = constant(test.comparators[0])[1]  # type: ignore[attr-defined]
    if isinstance(op, _ORDER):  # a number's order; any other value's is left open (or raises)
        if kind != "c" or type(value) not in (int, float) or not isinstance(other, (int, float)):
            return None
        assert isinstance(value, (int, float))
        return bool(_COMPARED[type(op)](value, other))
    if kind != "c":  # a class or a bool is not None; its equality is left open
        return isinstance(op, ast.IsNot) if isinstance(op, (ast.Is, ast.IsNot)) and other is None else None
    if isinstance(op, ast.Is):
        return value is other
    if isinstance(op, ast.IsNot):
        return value is not other
    return (value == other) if isinstance(op, ast.Eq) else (value != other)


def binding(sig: str, args: str, on_object: bool) -> dict[str, Bound]:
    """What one call binds the callee's parameters to: its constants and pass-throughs, and
    the defaults of the parameters it leaves out (none when it unpacks `*args`/`**kwargs`).
    `on_object`: called on an instance or class (`x.m()`, `C()`), not as `C.m(x)`."""
    positional, keyword_only, defaults, supplied, keeps = json.loads(sig)[:5]
    if not keeps:
        return {}
    names = positional[1:] if supplied == 2 or (supplied and on_object) else positional
    count, unpacks, named, constants, kinds, passed = json.loads(args)
    everyone = {*names, *keyword_only}
    env: dict[str, Bound] = {}
    for kind, pairs in (("c", constants), ("p", passed), *(((k, [[key, None]]) for key, k in kinds))):
        for key, value in pairs:
            name = names[key] if isinstance(key, int) and key < len(names) else key
            if isinstance(name, str) and name in everyone:
                env[name] = (kind, value)
    if not unpacks:
        for name in [*names[count:], *keyword_only]:
            if name not in named and name in defaults:
                env[name] = ("c", defaults[name])
    return env


def accepts(sig: str, args: str) -> bool:
    """Whether a call on an object (`v(a, b)`, `self.held(a, b)`) can bind to a signature: as
    many positional arguments as it names (`*args` absorbs none; a signature that names none but
    takes `*args` or `**kwargs` takes no call), the keywords it names
    among its parameters (or `**kwargs`), every parameter without a default given. False when
    the call unpacks `*args`/`**kwargs` (nothing to count) or the decorators do not keep the
    signature as written."""
    positional, keyword_only, _, supplied, keeps, with_default, varargs, varkw, needed_kw = json.loads(sig)
    count, unpacks, named = json.loads(args or _NO_ARGUMENTS)[:3]
    if not keeps or unpacks:
        return False
    names = positional[1:] if supplied else positional
    if count > len(names) or not names and (varargs or varkw):  # `*args`: no evidence of arity
        return False
    given = set(names[:count])
    if any(k in given or (k not in names and k not in keyword_only and not varkw) for k in named):
        return False
    needed = names[:len(names) - with_default]
    return all(n in given or n in named for n in needed) and all(k in named for k in needed_kw)
