import concurrent.futures
import os.path
import xml.etree.ElementTree as ET
from json import JSONDecodeError as Decode

from ..parent import ParentError
from .sibling import SiblingError

Alias = LookupError


def local_import():
    from http.client import HTTPException
    raise HTTPException("local import")


def module_alias():
    raise ET.ParseError("module alias")


def name_alias():
    raise Decode("alias", "doc", 0)


def relative():
    raise SiblingError("relative")


def relative_up():
    raise ParentError("relative up")


def dotted_import():
    raise concurrent.futures.TimeoutError("dotted import")


def assigned_alias():
    raise Alias("module alias assignment")


def module_attribute():
    raise os.error("attribute of module")


def shadowed(ValueError=KeyError):
    raise ValueError("a parameter named like a builtin")
