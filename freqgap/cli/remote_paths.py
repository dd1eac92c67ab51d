"""Which options take bucket and other URIs (s3://, gs://, hdfs://…): `count`'s input and
output, and the corpus a demo counts, read and written through counting/storage.py and
pyarrow.fs (docs/cluster.md). Every other stage reads and writes local paths with pathlib,
which takes `s3://b/x` for the local directory `s3:/b/x` (an output would be written
there, in silence): such a value is refused in one line before any work."""

from __future__ import annotations

import argparse
import re

from freqgap.errors import UsageError

REMOTE_OPTIONS = {"count": {"input", "out"}, "demo": {"corpus"}}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def refuse_unsupported_uris(args: argparse.Namespace) -> None:
    command = getattr(args, "command", None)
    allowed = REMOTE_OPTIONS.get(command, set())
    for name, value in sorted(vars(args).items()):
        if name.startswith("_") or name in allowed:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and _URI.match(item):
                where = (f"this option of `freqgap {command}` takes a local path only (URIs: "
                         + ", ".join(f"--{a}" for a in sorted(allowed)) if allowed else
                         f"`freqgap {command}` reads and writes local paths only (URIs: "
                         "`freqgap count --input/--out`")
                raise UsageError(f"--{name.replace('_', '-')} {item}: {where}; docs/cluster.md); "
                                 "copy it to a local directory first (e.g. `aws s3 cp --recursive`)")
