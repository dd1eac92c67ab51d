"""Which options take bucket and other URIs (s3://, gs://, hdfs://…).

`count`'s input and output, and the corpus a demo counts, are read and written through
counting/storage.py and pyarrow.fs (docs/cluster.md). The later stages read and write
local paths (DuckDB, pathlib), so for them an object-store URI goes through a local copy
(`counting/bucket_copies.py`): a finished directory they read (FETCHED, MIRRORED) is
fetched into the local cache, and an output (PUBLISHED) is a local mirror published
manifest-last when the stage succeeds. Every other path option takes a local path: pathlib
would take `s3://b/x` for the local directory `s3:/b/x` (an output would be written there,
in silence), so a URI there is refused in one line before any work.
"""

from __future__ import annotations

import argparse
import re

from freqgap.errors import UsageError

REMOTE_OPTIONS = {"count": {"input", "out"}, "demo": {"corpus"}}
PUBLISHED = {"instances": "out", "predict": "out", "gaps": "out"}     # written through a mirror
MIRRORED = {"gaps": {"predictions"}}          # a prefix of finished directories, read as a mirror
FETCHED = {"instances": {"counts"}, "count-report": {"counts"}, "predict": {"prompts"},
           "gaps": {"counts", "instances"}, "query": {"results"}}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def _refusal(command: str, name: str, item: str) -> UsageError:
    takes = sorted(REMOTE_OPTIONS.get(command, set()) | FETCHED.get(command, set())
                   | MIRRORED.get(command, set())
                   | ({PUBLISHED[command]} if command in PUBLISHED else set()))
    where = (f"this option of `freqgap {command}` takes a local path only (URIs: "
             + ", ".join(f"--{a}" for a in takes) if takes else
             f"`freqgap {command}` reads and writes local paths only (URIs: "
             "`freqgap count --input/--out`")
    return UsageError(f"--{name.replace('_', '-')} {item}: {where}; docs/cluster.md); "
                      "copy it to a local directory first (e.g. `aws s3 cp --recursive`)")


def localize_uris(args: argparse.Namespace) -> None:
    """Fetch the finished directories a stage reads from a bucket; refuse other URIs."""
    command = getattr(args, "command", None)
    for name, value in sorted(vars(args).items()):
        if name.startswith("_") or name in REMOTE_OPTIONS.get(command, ()):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if not (isinstance(item, str) and _URI.match(item)):
                continue
            mirrored = name in MIRRORED.get(command, ())
            if not isinstance(value, str) or not (mirrored or name in FETCHED.get(command, ())):
                raise _refusal(command, name, item)
            from freqgap.counting.bucket_copies import fetch_finished, pull
            from freqgap.counting.objectstore import is_object_store
            from freqgap.paths import cache_root

            if not is_object_store(item) or any(c in item for c in "*?["):
                raise _refusal(command, name, item)
            if mirrored:                  # one finished directory, or a prefix of them
                mirror = pull(item, cache_root() / "mirrors")
                setattr(args, name, str(mirror) if (mirror / "_manifest.json").is_file()
                        else f"{mirror}/*/")
                continue
            if getattr(args, "allow_write", False):
                raise UsageError(f"--allow-write: the results of {item} are a fetched copy; "
                                 "changes would not reach the bucket (drop --allow-write, or "
                                 "copy the directory locally and query that)")
            setattr(args, name, str(fetch_finished(item, cache_root() / "fetched")))


def run_with_uris(args: argparse.Namespace) -> int:
    """Run the chosen stage (`args._run`) with its URIs resolved: inputs fetched
    (`localize_uris`), and an object-store output of a stage in PUBLISHED written to a
    local mirror of it (`bucket_copies.pull`) and published when the stage succeeds
    (`bucket_copies.push`: manifests deleted first and uploaded last)."""
    command = getattr(args, "command", None)
    option = PUBLISHED.get(command)
    target = getattr(args, option, None) if option else None
    if not (isinstance(target, str) and _URI.match(target)):
        localize_uris(args)
        return int(args._run(args) or 0)
    from freqgap.counting.bucket_copies import pull, push
    from freqgap.counting.objectstore import is_object_store
    from freqgap.paths import cache_root

    if not is_object_store(target):
        raise _refusal(command, option, target)
    setattr(args, option, None)
    localize_uris(args)
    mirror = pull(target, cache_root() / "mirrors")
    setattr(args, option, str(mirror))
    code = int(args._run(args) or 0)
    if code == 0:
        push(mirror, target)
        print(f"published to {target} (manifest last)", flush=True)
    return code
