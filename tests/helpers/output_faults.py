"""The ways a record file breaks by hand (BREAKS), and the breaking."""

from __future__ import annotations

from pathlib import Path

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)
)


def _python_tag(text: str, marker: Path) -> str:
    return text.replace("status: active", f"status: !!python/object/apply:os.system ['touch {marker}']")


def _replace(old: str, new: str):  # type: ignore[no-untyped-def]
    return lambda text, _: text.replace(old, new, 1)


BREAKS = {
    # name: (how the file is broken, the start of the line the message must name, or None)
    "invalid_yaml": (_replace("status: active", "status: [active"), "extracted:"),
    "wrong_type": (_replace("  line: ", "  line: many # "), "  line: many"),
    "wrong_status": (_replace("status: active", "status: 7"), "status: 7"),
    "missing_field": (_replace("  exception: ValueError\n", ""), "extracted:"),
    "extra_top_level_key": (lambda text, _: text + "owner: someone\n", "schema_version"),
    "python_tag": (_python_tag, "status:"),
    "python_name_tag": (_replace("status: active", "status: !!python/name:os.system"), "status:"),
    "custom_tag": (_replace("status: active", "status: !vault 1"), "status:"),
    "alias_bomb": (lambda text, _: BILLION_LAUGHS + text, "b: &b"),
    "single_alias": (_replace("  what_it_means:", "  x: &x 1\n  y: *x\n  what_it_means:"), "  y: *x"),
    "deep_block_nesting": (lambda text, _: "x: " + "- " * 200_000 + "y\n" + text, "x: "),
    "deep_flow_nesting": (lambda text, _: "x: " + "[" * 200_000 + "]" * 200_000 + "\n" + text, "x: "),
    "not_utf8": (_replace("status: active", "status: \udcff"), "status:"),
    "utf16": (None, None),
    "null_bytes": (_replace("status: active", "status: act\x00ive"), "status:"),
    "empty": (lambda text, _: "", None),
    "only_comment": (lambda text, _: "# nothing here\n", None),
    "two_documents": (lambda text, _: text + "---\nid: 0\n", None),
    "a_list": (lambda text, _: "- " + text.replace("\n", "\n  "), "- "),
    "id_differs": (None, "id:"),
    "hostile_id": (_replace("id: ", "id: ../../x  # "), "id:"),
    "id_with_newline": (None, "id:"),
    "annotation_wrong_type": (_replace("  what_it_means:", "  what_it_means: [1]\n  x:"),
                              "  what_it_means: [1]"),
    "truncated": (lambda text, _: text[: len(text) // 2], None),
}


def _break(path: Path, name: str, marker: Path) -> None:
    text = path.read_text(encoding="utf-8")
    record_id = path.stem
    if name == "id_with_newline":
        text = text.replace(f"id: {record_id}", f'id: "{record_id}\\n"', 1)
    elif name == "id_differs":
        text = text.replace(f"id: {record_id}", f"id: {'0' * 16}", 1)
    elif name == "utf16":
        path.write_bytes(text.encode("utf-16"))
        return
    else:
        text = BREAKS[name][0](text, marker)  # type: ignore[misc]
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
