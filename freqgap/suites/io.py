"""Reading benchmark files with errors that name the file, the line and the missing field.

The suites read released files in their original layouts; a file in the wrong shape must
fail loudly at the first bad line rather than produce a silently wrong evaluation.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Iterator

from freqgap.errors import FreqgapError
from freqgap.jsonl import iter_json_objects


class SuiteDataError(FreqgapError):
    """A benchmark file is missing, unreadable or in the wrong shape."""


def _check_file(path: Path) -> None:
    if not path.exists():
        raise SuiteDataError(f"{path}: file not found")
    if not path.is_file():
        raise SuiteDataError(f"{path}: is a directory, not a benchmark file; pass the file")


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file."""
    path = Path(path)
    _check_file(path)
    return iter_json_objects(path, SuiteDataError)


def iter_csv(path: str | Path, required: tuple[str, ...],
             strip: bool = True) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line number, row) for each data row of a CSV file with the required header
    fields; values are stripped unless `strip` is False (prompts kept byte for byte)."""
    path = Path(path)
    _check_file(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteDataError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [f for f in required if f not in header]
        if missing:
            raise SuiteDataError(f"{path}:1: header lacks field(s) {', '.join(missing)} "
                                 f"(has: {', '.join(header) or 'nothing'})")
        lineno = reader.line_num + 1
        for row in reader:
            if None in row:
                raise SuiteDataError(f"{path}:{lineno}: more fields than the header names")
            clean = {(k or "").strip(): ((v or "").strip() if strip else (v or ""))
                     for k, v in row.items()}
            empty = [f for f in required if not clean.get(f, "").strip()]
            if empty:
                raise SuiteDataError(f"{path}:{lineno}: empty field(s) {', '.join(empty)}")
            yield lineno, clean
            lineno = reader.line_num + 1


def require(obj: dict[str, Any], fields: tuple[str, ...], path: str | Path, lineno: int) -> None:
    """Raise naming the first missing field, the file and the line."""
    for name in fields:
        if name not in obj:
            raise SuiteDataError(f"{path}:{lineno}: missing field {name!r} "
                                 f"(has: {', '.join(sorted(obj)) or 'nothing'})")


def as_text(obj: dict[str, Any], name: str, path: str | Path, lineno: int) -> str:
    """A field that must be a JSON string: a number or null is a wrong file, not a text."""
    value = obj[name]
    if not isinstance(value, str):
        raise SuiteDataError(f"{path}:{lineno}: field {name!r} is {value!r} "
                             f"({_json_type(value)}), not a string")
    return value


def _json_type(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", type(None): "null", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def as_bool(value: Any, what: str, path: str | Path, lineno: int) -> bool:
    """The benchmarks' boolean forms: true/false (any case, as text), bools, 0/1."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise SuiteDataError(f"{path}:{lineno}: field {what!r} is {value!r}, not a boolean")


HUB_PREFIX = "hf:"


def materialise(spec: str | Path, dest: str | Path) -> Path:
    """A local JSON Lines path for `spec`: a local path as is, or `hf:NAME[:SPLIT]` fetched
    with the `datasets` library (optional: the `hub` extra) and written to `dest`, so that
    hub data goes through the same loaders and checks as a released file.
    Examples: hf:HiTZ/This-is-not-a-dataset:test, hf:inverse-scaling/NeQA:train."""
    text = str(spec)
    if not text.startswith(HUB_PREFIX):
        return Path(spec)
    name, _, split = text[len(HUB_PREFIX):].partition(":")
    try:
        import datasets  # optional dependency
    except ImportError:
        raise SuiteDataError(f"{text}: reading from the Hugging Face hub needs the `datasets` "
                             "library (pip install 'freqgap[hub]'); or pass a local file") from None
    try:
        data = datasets.load_dataset(name, split=split or "train")
    except Exception as exc:  # network, missing dataset or split: one clear message
        raise SuiteDataError(f"{text}: cannot load from the hub ({type(exc).__name__}: "
                             f"{exc}); download the file and pass its local path") from exc
    out = Path(dest) / (name.replace("/", "__") + (f"-{split}" if split else "") + ".jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for row in data:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(out)
    return out
