"""`if P is not None: self.x = P` in an `__init__`: where the raise leaves P None, `self.x` is the
class attribute (the raised class's own, or a base's), not the parameter.

The rule's real examples, from two libraries of issue 47's working half: werkzeug's
HTTPException (`description`) and aiohttp's HttpProcessingError (`code`); and what it leaves as
before: a call that gives P, an `if` with an `else`, a parameter the `__init__` assigns."""

from __future__ import annotations

from crawler.catalogue import classes
from crawler.parse.visitor import find_raise_sites
from tests.helpers.classes import messages, resolve_sources

# pallets/werkzeug 1b00618 src/werkzeug/exceptions.py:68-185, 353-363 (docstrings and the
# methods that do not bear on str() left out)
WERKZEUG = '''
from http import HTTPStatus


class HTTPException(Exception):
    code: int | None = None
    description: str | None = None

    def __init__(self, description=None, response=None):
        super().__init__()
        if description is not None:
            self.description = description
        self.response = response

    @property
    def name(self) -> str:
        try:
            return HTTPStatus(self.code or 0).phrase
        except ValueError:
            return "Unknown"

    def __str__(self) -> str:
        code = self.code if self.code is not None else "???"
        return f"{code} {self.name}: {self.description}"


class NotFound(HTTPException):
    code = 404
    description = (
        "The requested URL was not found on the server. If you entered"
        " the URL manually please check your spelling and try again."
    )


def not_found():
    raise NotFound()


def not_found_said(why):
    raise NotFound(why)
'''

NOT_FOUND = ("The requested URL was not found on the server. If you entered the URL manually "
             "please check your spelling and try again.")

# aio-libs/aiohttp 495e778 aiohttp/http_exceptions.py:10-46 (docstrings left out)
AIOHTTP = '''
from textwrap import indent


class HttpProcessingError(Exception):
    code = 0
    message = ""
    headers = None

    def __init__(self, *, code=None, message="", headers=None):
        if code is not None:
            self.code = code
        self.headers = headers
        self.message = message

    def __str__(self) -> str:
        msg = indent(self.message, "  ")
        return f"{self.code}, message:\\n{msg}"


class BadHttpMessage(HttpProcessingError):
    code = 400
    message = "Bad Request"

    def __init__(self, message, *, headers=None):
        super().__init__(message=message, headers=headers)
        self.args = (message,)


def coded(status):
    raise HttpProcessingError(code=status, message="Bad status line")


def uncoded():
    raise HttpProcessingError(message="Bad status line")
'''


def _marked(source: str, path: str = "pkg/errors.py") -> dict[tuple[str, str], str | None]:
    found = find_raise_sites(path, source.encode(), "pkg.errors")
    return {(cls.name, slot.name): slot.if_given
            for cls in found.classes for slot in cls.self_attributes}


def test_werkzeug_a_not_found_left_without_a_description_shows_the_classs_own() -> None:
    assert _marked(WERKZEUG)[("HTTPException", "description")] == "description"
    got = messages(resolve_sources({"pkg/errors.py": WERKZEUG}))
    (plain,) = got["not_found"]
    assert (plain.kind, plain.template) == ("class_default", "{code} {self.name}: " + NOT_FOUND)
    assert plain.composed_by == "pkg.errors.HTTPException.__str__"
    (said,) = got["not_found_said"]  # given: the parameter's text, as before
    assert said.template == "{code} {self.name}: {why}"


def test_aiohttp_a_code_the_call_leaves_none_is_marked_as_the_guard_sets_it() -> None:
    marked = _marked(AIOHTTP)
    assert marked[("HttpProcessingError", "code")] == "code"
    assert marked[("HttpProcessingError", "message")] is None  # set whatever the call gives
    # its __str__ runs `indent(self.message, "  ")`, which the class pass does not read: each
    # raise keeps its own text, and says which method it did not follow
    got = messages(resolve_sources({"pkg/errors.py": AIOHTTP}))
    for name in ("coded", "uncoded"):
        (found,) = got[name]
        assert (found.template, found.not_followed) == (
            "Bad status line", "pkg.errors.HttpProcessingError.__str__")


def test_an_else_or_an_assigned_parameter_leaves_the_attribute_as_before() -> None:
    source = '''
class WithElse(Exception):
    description = "the default"

    def __init__(self, description=None):
        if description is not None:
            self.description = description
        else:
            self.description = "other"


class Reassigned(Exception):
    description = "the default"

    def __init__(self, description=None):
        description = description or None
        if description is not None:
            self.description = description


class Nested(Exception):
    description = "the default"

    def __init__(self, description=None, flag=False):
        if flag:
            if description is not None:
                self.description = description
'''
    assert set(_marked(source).values()) == {None}


def test_the_class_digest_of_a_class_without_the_guard_is_unchanged_by_the_field() -> None:
    # the manifests keep each class's digest: a field added to the slots must not move it
    found = find_raise_sites("pkg/errors.py", AIOHTTP.encode(), "pkg.errors")
    slots = {slot.name: slot for cls in found.classes for slot in cls.self_attributes}
    unguarded, guarded = classes._slot_data(slots["message"]), classes._slot_data(slots["code"])
    assert isinstance(unguarded, dict) and isinstance(guarded, dict)
    assert "if_given" not in unguarded and guarded["if_given"] == "code"
