"""The annotation-mismatch findings a person dismissed: one file in a repository's folder.

`crawler check --dismiss ID` writes `dismissed.yaml` beside the manifest; each entry keeps the
digest of the annotation's judged text and of the record's facts as they were when it was
dismissed, and the finding stays dismissed while both are the same. Nothing here touches a
record's file: an annotation is never written to dismiss a finding. The file is written whole
and atomically, its entries by id, so that the same dismissals give the same bytes.

    dismissed:
      c24a155dbe244fb0:
        annotation: 5b0e...   # sha256 of the annotation's judged text
        facts: 91d2...        # sha256 of the record's facts the check reads
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from crawler.errors import OutputError
from crawler.store.atomic import write_atomic
from crawler.store.safe_yaml import dump_yaml, load_yaml_file

DISMISSED = "dismissed.yaml"
_HEADER = ("# Findings of `crawler check` a person dismissed (`crawler check --dismiss ID`): each\n"
           "# stays dismissed while its annotation's text and its record's facts have these\n"
           "# digests. Delete an entry to have its finding listed again.\n")


def load_dismissals(folder: Path) -> dict[str, tuple[str, str]]:
    """Each dismissed record's id -> the digests of its annotation and facts; none without a
    file. A file that is not such a mapping raises OutputError, naming it."""
    path = folder / DISMISSED
    if not path.exists() and not path.is_symlink():
        return {}
    data, _ = load_yaml_file(path)
    entries = data.get("dismissed") if isinstance(data, Mapping) else None
    if not isinstance(entries, Mapping) or not all(
            isinstance(value, Mapping) and isinstance(value.get("annotation"), str)
            and isinstance(value.get("facts"), str) for value in entries.values()):
        raise OutputError(f"{path}: not a list of dismissals (`dismissed:` mapping each record id "
                          "to its `annotation` and `facts` digests); fix or delete it")
    return {str(key): (value["annotation"], value["facts"]) for key, value in entries.items()}


def write_dismissals(folder: Path, entries: Mapping[str, tuple[str, str]]) -> None:
    """Write every dismissal of the folder, by id, in one atomic replace."""
    body = dump_yaml({"dismissed": {key: {"annotation": annotation, "facts": facts}
                                    for key, (annotation, facts) in sorted(entries.items())}})
    write_atomic(folder / DISMISSED, _HEADER + body)
