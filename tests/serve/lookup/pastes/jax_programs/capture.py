"""Run one of errors.py's programs in the jax virtualenv and print, as JSON, what it raised:
the exception's class as a traceback names it, its message, and the raise site (the last
frame of the unfiltered traceback: a file under jax/, its line and function)."""

import json
import sys
import traceback

import errors

name = sys.argv[1]
try:
    getattr(errors, name)()
except Exception as error:  # noqa: BLE001 - every error is what we came for
    frame = traceback.extract_tb(error.__traceback__)[-1]
    module = type(error).__module__
    print(json.dumps({
        "class": type(error).__qualname__ if module == "builtins" else f"{module}.{type(error).__qualname__}",
        "message": str(error),
        "file": frame.filename, "line": frame.lineno, "function": frame.name,
    }))
