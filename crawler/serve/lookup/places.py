"""Where a pasted traceback says the error was raised: its frames read against the records' places.

A traceback names, for every frame, a file, a line and a function. A frame is *in a catalogued
repository* when the repository-relative path of one of its records is a suffix of the frame's
path, component by component, over at least two components (the package's folder and the file:
`requests/models.py` in `C:\\env\\Lib\\site-packages\\requests\\models.py`, or in Sentry's
`requests/models.py`; a file at the repository's top needs only its name). Any install prefix,
drive letter or separator is left out; a Windows path is compared without case.

The last such frame of a report (a traceback prints the most recent call last) is where the
library raised, or called what raised: `deepest_frame`. What it says of a record (`Evidence`):

- `LINE`: the record's file and its raise's line (and the frame's function is the record's, if
  the frame names one): the paste names this raise site;
- `FUNCTION`: the record's file and function, another line (another release, or a raise of
  several lines): one of the raises of that function;
- `STACK`: a frame higher up names the record's file and function: the error went through it;
- `NOWHERE`: no frame of the paste names the record's place.

Evidence orders records that print the same words (`ranking._place`) and finds the records
whose message is only a variable (`raise KeyError(key)`: no text to match, only a place).

>>> frames = (Frame("D:\\\\venv\\\\Lib\\\\site-packages\\\\requests\\\\models.py", 388,
...                 "prepare_url"),)
>>> evidence_of("src/requests/models.py", "PreparedRequest.prepare_url", 388, frames)
3
>>> evidence_of("src/requests/models.py", "PreparedRequest.prepare_url", 420, frames)
2
>>> evidence_of("src/requests/sessions.py", "Session.request", 516, frames)
0
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from crawler.serve.lookup.paste import Frame

NOWHERE, STACK, FUNCTION, LINE = 0, 1, 2, 3
Evidence = int  # NOWHERE, STACK, FUNCTION or LINE: the more, the closer the paste points
PLACE_NAMES = {STACK: "stack", FUNCTION: "function", LINE: "line"}  # as `lookup --json` says it

_DRIVE = re.compile(r"^[A-Za-z]:")


def path_parts(path: str) -> tuple[str, ...]:
    """A frame's or a record's path as its components: separators of either kind, a drive
    letter left out; a Windows path (backslashes or a drive) in lower case."""
    windows = _is_windows(path)
    path = _DRIVE.sub("", path.replace("\\", "/"))
    parts = tuple(part for part in path.split("/") if part not in ("", "."))
    return tuple(part.lower() for part in parts) if windows else parts


def file_name(path: str) -> str:
    """The last component of a record's or a frame's path, in lower case: how records are
    found for a frame (`Source.in_files`), whatever the separator or the case."""
    parts = path_parts(path)
    return parts[-1].lower() if parts else ""


def _is_windows(path: str) -> bool:
    return "\\" in path or bool(_DRIVE.match(path))


def in_file(record_path: str, frame_path: str) -> bool:
    """Whether a frame's path is the record's file: their ends agree over at least two
    components (one, for a file at the repository's top)."""
    record = path_parts(record_path)
    seen = path_parts(frame_path)
    if _is_windows(frame_path):
        record = tuple(part.lower() for part in record)
    common = 0
    while common < min(len(record), len(seen)) and record[-1 - common] == seen[-1 - common]:
        common += 1
    return common >= min(2, len(record)) and common > 0


def same_file_name(record_path: str, frame_path: str) -> bool:
    """Whether the two paths name files of the same name (a Windows frame's without case)."""
    record, seen = path_parts(record_path), path_parts(frame_path)
    if not record or not seen:
        return False
    return record[-1] == seen[-1] or (_is_windows(frame_path) and record[-1].lower() == seen[-1])


def moved_within_package(record_path: str, frame_path: str) -> bool:
    """Whether a frame's file reads as the record's file moved within its package between
    releases: the same file name, in a path that shares a folder with the record's
    (`flask/app.py` for `src/flask/sansio/app.py`); not another package's file of the same name
    (docker-pycreds' `dockerpycreds/store.py` for docker-py's `docker/credentials/store.py`). A
    file at the repository's top has no folder to share: its name is enough."""
    if not same_file_name(record_path, frame_path):
        return False
    folders = {part.lower() for part in path_parts(record_path)[:-1]}
    return not folders or any(part.lower() in folders for part in path_parts(frame_path)[:-1])


def function_name(qualname: str) -> str:
    """The name a traceback shows for a function: its `__qualname__`'s last part."""
    return qualname.rpartition(".")[2]


def names_function(qualname: str, frame: Frame) -> bool:
    """Whether the frame's function is the record's: by the name Python's traceback shows, its
    qualified name, or the module-qualified name a Cython-compiled module's frames show
    (`pydantic.main.BaseModel.__setattr__`)."""
    if frame.function is None:
        return False
    shown = frame.function.strip()
    return shown in (qualname, function_name(qualname)) or shown.endswith("." + qualname)


def deepest_frame(frames: Sequence[Frame], paths: Iterable[str]) -> Frame | None:
    """The last frame of a report that is in one of the files `paths` (records' paths): where
    the catalogued code raised, or called what raised."""
    known = list(dict.fromkeys(paths))
    for frame in reversed(frames):
        if any(in_file(path, frame.path) for path in known):
            return frame
    return None


class _Place(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def qualname(self) -> str: ...


def moved_frame(frames: Sequence[Frame], places: Iterable[_Place]) -> Frame | None:
    """When no frame is in a catalogued file: the last frame that reads as a record's function
    in its file moved within its package since the user's release (`moved_within_package`,
    the frame naming the record's function), where the library raised. pymongo's
    `pymongo/srv_resolver.py`, `_resolve_uri`, now `pymongo/synchronous/srv_resolver.py`;
    Flask's `flask/app.py`, now `src/flask/sansio/app.py`. Not a frame of another package's
    file of the same name (`dockerpycreds/store.py` for docker-py's
    `docker/credentials/store.py`), nor one whose function no record of that file has."""
    known = list(places)
    for frame in reversed(frames):
        if any(moved_within_package(place.path, frame.path) and names_function(place.qualname, frame)
               for place in known):
            return frame
    return None


def evidence_of(path: str, qualname: str, line: int, frames: Sequence[Frame],
                deepest: Frame | None = None) -> Evidence:
    """What a report's frames say of a record at `path`, in function `qualname`, at `line`;
    `deepest`: the report's last frame in a catalogued file (`deepest_frame`; by default the
    last frame in the record's own file)."""
    if deepest is None:
        deepest = deepest_frame(frames, [path])
    if deepest is not None and in_file(path, deepest.path):
        if deepest.line == line and (deepest.function is None or names_function(qualname, deepest)):
            return LINE
        if names_function(qualname, deepest):
            return FUNCTION
    if deepest is not None and moved_within_package(path, deepest.path) and \
            names_function(qualname, deepest):
        return FUNCTION  # the file moved within the package between releases (`flask/app.py`)
    if any(in_file(path, frame.path) and names_function(qualname, frame) for frame in frames):
        return STACK
    return NOWHERE
