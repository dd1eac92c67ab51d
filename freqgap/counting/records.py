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
        raise RecordError(INVALID_UTF8, f"byte {exc.start}: {exc.reason}") from None
    try:
        start = 0 if line[:1] not in _JSON_SPACE else len(line) - len(line.lstrip(_JSON_SPACE))
        obj, end = _DECODER.raw_decode(line, start)
    except json.JSONDecodeError as exc:
        raise RecordError(NOT_JSON, f"{exc.msg} at column {exc.colno}") from None
    if end != len(line) and line[end:].strip():
        raise RecordError(NOT_JSON, f"extra data at column {end + 1}")
    if type(obj) is not dict:
        raise RecordError(NOT_OBJECT, f"found {type(obj).__name__}")
    text = obj.get(text_field, _MISSING) if "." not in text_field else _dotted(obj, text_field)
    if type(text) is not str or ("\\ud" in line or "\\uD" in line):
        text = check_text(text, text_field)
    return text, _subset(obj, subset_field)


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
