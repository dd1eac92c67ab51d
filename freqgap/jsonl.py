"""Line-numbered JSON Lines reading shared by every stage that reads user-supplied files.

One reader so that every stage names the file and line the same way when a line is not
UTF-8, not JSON or not an object; each caller passes its own `FreqgapError` subclass so
the message still says which kind of input was wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from freqgap.errors import FreqgapError


def iter_json_objects(path: str | Path, error: type[FreqgapError] = FreqgapError
                      ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; anything else raises `error`."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise error(f"{path}: cannot open ({exc.strerror})") from exc
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise error(f"{path}:{lineno}: not UTF-8 text (a binary or differently "
                            "encoded file?)") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise error(f"{path}:{lineno}: expected a JSON object, got "
                            f"{type(obj).__name__}")
            yield lineno, obj
