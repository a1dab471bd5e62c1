"""Names with a fixed meaning to the message readers, shared with modules that read no source.

The skeleton (which functions it may stub) and the class pass (what a class's `__init__` calls)
ask the same questions the readers do; these constants answer them there without importing a
parser, so the crawler's own process, which parses nothing, never loads one.
"""

from __future__ import annotations

# Methods whose returns a `__str__` may show: read, and never stubbed by a skeleton.
MESSAGE_METHODS = frozenset({"__str__", "__repr__", "format_message", "get_message",
                             "_format_message", "message", "msg", "_message"})


# The decorators that leave a function callable as it is written (the readers follow it).
PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


SEVERAL = "several"  # `ClassDef.init_target` of an __init__ that calls more than one base __init__
