from clspkg.errors import BadThing, Templated
from .errors import Coded as ReCoded

__all__ = ["BadThing", "ReCoded", "Templated"]
