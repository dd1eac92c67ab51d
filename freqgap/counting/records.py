"""Turning raw JSON Lines records into document texts, naming every bad record.

Reasons are short, fixed categories (they key the manifest's skip counts) followed by
detail in the error message.
"""

from __future__ import annotations

import json
from typing import Any

INVALID_UTF8 = "invalid UTF-8"
NOT_JSON = "not valid JSON"
NOT_OBJECT = "not a JSON object"
MISSING_TEXT = "missing text field"
TEXT_NOT_STRING = "text field is not a string"
BAD_UNICODE = "text holds a lone surrogate"
REASONS = (INVALID_UTF8, NOT_JSON, NOT_OBJECT, MISSING_TEXT, TEXT_NOT_STRING, BAD_UNICODE)


class RecordError(ValueError):
    """A bad record: `reason` is one of REASONS, `detail` says more."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


def get_field(obj: dict[str, Any], dotted: str) -> Any:
    """`obj['a']['b']` for 'a.b'; KeyError if any part is absent."""
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            raise KeyError(dotted)
        obj = obj[part]
    return obj


_DECODER = json.JSONDecoder()
_MISSING = object()
_JSON_SPACE = " \t\r\n"


def parse_record(raw: bytes, text_field: str, subset_field: str | None) -> tuple[str, str | None]:
    """(text, subset) of one JSON Lines record, or RecordError. This is the per-document
    hot path, so the common case (valid UTF-8, an object, a string text) is kept short."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(INVALID_UTF8, f"byte {exc.start}: {exc.reason}{_bom(raw)}") from None
    try:
        start = 0 if line[:1] not in _JSON_SPACE else len(line) - len(line.lstrip(_JSON_SPACE))
        obj, end = _DECODER.raw_decode(line, start)
    except json.JSONDecodeError as exc:
        raise RecordError(NOT_JSON, f"{exc.msg.removesuffix(' at')} at column {exc.colno}{_bom(raw)}") from None
    if end != len(line) and line[end:].strip():
        raise RecordError(NOT_JSON, f"extra data at column {end + 1}")
    if type(obj) is not dict:
        raise RecordError(NOT_OBJECT, f"found {type(obj).__name__}")
    text = obj.get(text_field, _MISSING) if "." not in text_field else _dotted(obj, text_field)
    if type(text) is not str or ("\\ud" in line or "\\uD" in line):
        text = check_text(text, text_field)
    return text, _subset(obj, subset_field)


# Byte-order marks: JSON Lines is UTF-8 without one (an editor's "UTF-8 with BOM", or a
# UTF-16/32 export, fails on its first line otherwise with a puzzling message).
_BOMS = ((b"\xef\xbb\xbf", "UTF-8"), (b"\xff\xfe\x00\x00", "UTF-32"),
         (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _bom(raw: bytes) -> str:
    """A note naming the byte-order mark the record starts with, or ''."""
    for mark, encoding in _BOMS:
        if raw.startswith(mark):
            return (f"; the line starts with a {encoding} byte-order mark (BOM): save the file "
                    "as UTF-8 without BOM")
    return ""


def _dotted(obj: dict[str, Any], dotted: str) -> Any:
    try:
        return get_field(obj, dotted)
    except KeyError:
        return _MISSING


def check_text(value: Any, text_field: str) -> str:
    """The text if it is a valid string, else RecordError."""
    if value is _MISSING:
        raise RecordError(MISSING_TEXT, f"no field {text_field!r}")
    if not isinstance(value, str):
        kind = "null" if value is None else type(value).__name__
        raise RecordError(TEXT_NOT_STRING, f"field {text_field!r} is {kind}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError(BAD_UNICODE, f"at character {exc.start}") from None
    return value


def _subset(obj: dict[str, Any], subset_field: str | None) -> str | None:
    if not subset_field:
        return None
    if subset_field == "meta.pile_set_name":      # the Pile's layout, the common case
        meta = obj.get("meta")
        value = meta.get("pile_set_name") if type(meta) is dict else None
    else:
        value = _dotted(obj, subset_field)
    return value if type(value) is str else None


# A run that skipped more than this share of its records (and one that skipped all) is not
# a result: the counts would describe the few records that happened to parse.
MAX_SKIPPED_SHARE = 0.5


def refuse_mostly_skipped(documents: int, skipped: dict[str, dict[str, Any]],
                          max_share: float = MAX_SKIPPED_SHARE) -> None:
    """Refuse a `--on-bad-record skip` run that skipped every record or more than
    `max_share` of them, naming the first skipped record's file, line and reason.
    `skipped` is the manifest's: path -> reason -> {count, first_lines}."""
    from freqgap.counting.inputs import BadInputError

    n = sum(info["count"] for reasons in skipped.values() for info in reasons.values())
    records = documents + n
    if n == 0 or (n < records and n <= max_share * records):
        return
    path = min(skipped)
    reason, info = max(skipped[path].items(), key=lambda item: item[1]["count"])
    line = min(info["first_lines"]) if info["first_lines"] else None
    raise BadInputError(path, f"{reason}: --on-bad-record skip skipped {n:,} of {records:,} "
                              f"records ({n / records:.0%}, more than --max-skipped-share "
                              f"{max_share:g}), so no result was written; fix the input or "
                              "the settings (e.g. --text-field)", line=line)
