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


def parse_record(raw: bytes, text_field: str, subset_field: str | None) -> tuple[str, str | None]:
    """(text, subset) of one JSON Lines record, or RecordError."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(INVALID_UTF8, f"byte {exc.start}: {exc.reason}") from None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(NOT_JSON, f"{exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise RecordError(NOT_OBJECT, f"found {type(obj).__name__}")
    return check_text(obj.get(text_field, _MISSING) if "." not in text_field
                      else _dotted(obj, text_field), text_field), _subset(obj, subset_field)


_MISSING = object()


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
    value = _dotted(obj, subset_field)
    return value if isinstance(value, str) else None
