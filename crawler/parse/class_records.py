"""Class statements as `ClassDef` records: bases, default templates, and what __init__ hands on.

The repository-wide class pass (`crawler.catalogue.classes`: `resolve`, `compose`) reads these records
to compose a raise's message with its class; this module reads them off one visited module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import libcst as cst

from crawler.parse import names
from crawler.parse._source import exact
from crawler.parse.message import class_text, flow
from crawler.parse.message.exception_call import call_templates
from crawler.parse.message.reading import Reader
from crawler.parse.message.templates import build_template
from crawler.parse.raise_visitor import FoundClass, RaiseVisitor, qualify
from crawler.records import ClassDef, Template, TextSlot


def class_record(path: str, module: cst.Module, found: FoundClass,
           lines: tuple[int, int | None, int | None], visitor: RaiseVisitor,
           constants: Mapping[str, cst.BaseExpression]) -> ClassDef:
    """A class statement as a record type, with its default message templates if any;
    `constants`: the module's (`class_text.module_constants`)."""
    bases = []
    for arg in found.node.bases:
        if arg.keyword is not None or arg.star:
            continue
        parts = names.dotted(arg.value)
        resolved = qualify(parts, found.scopes, visitor) if parts else None
        bases.append(resolved or exact(module, arg.value))
    line, init_line, attribute_line = lines
    templates: list[Template] = []
    template_from = None
    params: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    verbatim: tuple[str, ...] = ()
    if found.init_call is not None:
        call, position, assigned = found.init_call
        call = _without_self(call)
        made = call_templates(call, module, position, assigned=assigned) or []
        templates = [t for t in made if t.kind != "dynamic"]
        template_from = "init" if templates else None
        if templates and found.init is not None:
            params, keywords = _params(found.init)
            verbatim = _verbatim(module, call, templates[0], position, assigned,
                                 set(params) | set(keywords))
    if not templates and found.attribute is not None:
        _, value, position = found.attribute
        alternatives = Reader(module).message(value, position)
        templates = [build_template(kind, pieces) for kind, pieces in alternatives
                     if kind != "dynamic"]
        template_from = "attribute" if templates else None
    readable = class_text.Constants(constants, class_text.method_parameters(found.node))
    init_target: str | None = None
    init_args: tuple[TextSlot, ...] = ()
    if found.init is not None and not params:
        params, keywords = _params(found.init)
    if found.init_call is not None:
        call, position, assigned = found.init_call
        init_target = class_text.init_target(
            call, lambda parts: qualify(parts, found.scopes, visitor), found.statements)
        init_args = class_text.init_slots(module, _without_self(call), position, assigned,
                                          _none_defaults(found.init), readable)
    class_attributes, self_attributes, methods = class_text.slots(
        module, found.statements, _none_defaults(found.init), readable)
    prefix = f"{visitor.module_name}." if visitor.module_name else ""
    template_line = init_line if template_from == "init" else attribute_line
    defined_at = f"{path}:{template_line or line}"
    return ClassDef(
        qualname=prefix + found.qualname,
        name=found.node.name.value,
        bases=tuple(bases),
        path=path,
        line=line,
        templates=tuple(replace(t, defined_at=defined_at, argument=None) for t in templates),
        template_from=template_from,
        has_init=found.has_init,
        passes=_passes(found),
        params=params,
        keywords=keywords,
        verbatim=verbatim,
        init_target=init_target,
        init_args=init_args,
        self_attributes=self_attributes,
        class_attributes=class_attributes,
        methods=methods,
    )


def _params(init: cst.FunctionDef) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An __init__'s positional parameters after self, and its keyword-only ones."""
    positional = [p.name.value for p in (*init.params.posonly_params, *init.params.params)]
    return tuple(positional[1:]), tuple(p.name.value for p in init.params.kwonly_params)


def _none_defaults(init: cst.FunctionDef | None) -> frozenset[str]:
    """An __init__'s parameters whose default is None."""
    if init is None:
        return frozenset()
    params = (*init.params.posonly_params, *init.params.params, *init.params.kwonly_params)
    return frozenset(p.name.value for p in params
                     if isinstance(p.default, cst.Name) and p.default.value == "None")


def _verbatim(module: cst.Module, call: cst.Call, template: Template, position: flow.Position,
              assigned: set[str], params: set[str]) -> tuple[str, ...]:
    """Parameters every alternative of the template shows as given (str(), no conversion)."""
    values = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if template.argument is None or not template.argument.isdigit() \
            or int(template.argument) >= len(values):
        return ()
    alternatives = Reader(module, assigned).message(values[int(template.argument)], position)
    shown = [p for _, pieces in alternatives for p in pieces if p.is_placeholder]
    bent = {p.text for p in shown if not p.plain}
    return tuple(sorted({p.text for p in shown if p.plain and p.text in params}
                        - bent - assigned))


def _passes(found: FoundClass) -> int | None:
    """`def __init__(self, message, code=0): super().__init__(message)`: message's index, 0."""
    if found.init is None or found.init_call is None:
        return None
    args = _without_self(found.init_call[0]).args
    if len(args) != 1 or args[0].keyword is not None or args[0].star:
        return None
    value = args[0].value
    params = [p.name.value for p in (*found.init.params.posonly_params, *found.init.params.params)]
    if not isinstance(value, cst.Name) or value.value not in params[1:]:
        return None
    if value.value in found.init_call[2]:
        return None  # reassigned before the call: not handed on as it came
    return params[1:].index(value.value)


def _without_self(call: cst.Call) -> cst.Call:
    """`Base.__init__(self, msg)` read as `super().__init__(msg)`."""
    func = call.func
    if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call) and call.args:
        return call.with_changes(args=call.args[1:])
    return call

