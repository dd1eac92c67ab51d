"""Check a generated corpus against its manifest before it is used (issue 10.3).

A directory written by `generate_corpus` (the committed sample `data/sample/` among them)
lists every shard with its sha256. Counting such a directory (or single files or a glob of
it) first compares the files it is about to read with that list: a changed, missing or
unlisted shard is an error, never a count of other text than the manifest describes.
Hashing the 2 MB sample takes about 20 ms.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from freqgap.errors import FreqgapError
from freqgap.manifest import MANIFEST_NAME, load_manifest_file, read_manifest, sha256_file
from freqgap.paths import SAMPLE_CORPUS_DIR


class CorpusChecksumError(FreqgapError):
    """A generated corpus's files differ from those its manifest lists."""


def _remedy(directory: Path) -> str:
    if directory.resolve() == Path(SAMPLE_CORPUS_DIR).resolve():
        return "run `make sample-corpus` to rebuild the committed sample (or restore it with git)"
    return "regenerate it with `freqgap corpus` (or restore the original files)"


# The generators whose manifests list every shard with its sha256: the arithmetic corpus and
# the facts corpus of demo-entities (freqgap/corpus/facts.py).
CORPUS_STAGES = ("generate_corpus", "generate_facts_corpus")


def verify_corpus_dir(directory: str | Path, files: Iterable[str], whole: bool = True) -> int:
    """Check the data `files` found under a `generate_corpus` directory against its
    manifest; returns the number of shards checked. Other directories are left alone (0).
    `whole`: the directory itself is the input, so a listed shard that is absent is an
    error too (not when single files or a glob of it are given)."""
    directory = Path(directory)
    manifest_path = directory / MANIFEST_NAME
    if not manifest_path.is_file():
        return 0
    if load_manifest_file(manifest_path).get("stage") not in CORPUS_STAGES:
        return 0
    manifest = read_manifest(directory, stage=CORPUS_STAGES)
    listed = {s["file"]: s["sha256"] for s in manifest["shards"]}
    root = directory.resolve()
    found = {os.path.relpath(Path(f).resolve(), root): f for f in files
             if Path(f).resolve().is_relative_to(root)}
    remedy = _remedy(directory)
    unlisted = sorted(set(found) - set(listed))
    if unlisted:
        raise CorpusChecksumError(f"{directory / unlisted[0]}: not among the shards listed in "
                                  f"{manifest_path}; remove it, or {remedy}")
    missing = sorted(set(listed) - set(found)) if whole else []
    if missing:
        raise CorpusChecksumError(f"{directory / missing[0]}: listed in {manifest_path} but "
                                  f"missing; {remedy}")
    for name in sorted(found):
        got = sha256_file(found[name])
        if got != listed[name]:
            raise CorpusChecksumError(
                f"{directory / name}: sha256 {got[:12]}… differs from {listed[name][:12]}… "
                f"recorded in {manifest_path} (the file was changed or damaged); {remedy}")
    return len(found)


def verify_corpus_inputs(specs: Iterable[str], files: Iterable[str]) -> int:
    """Check every input file that belongs to a generated corpus: whole directories given
    as inputs, and single files or globs whose directory holds a `generate_corpus`
    manifest. Returns the number of shards checked (remote inputs are not checked)."""
    files = [f for f in files if "://" not in f]
    dirs = [Path(spec).resolve() for spec in specs if "://" not in spec and os.path.isdir(spec)]
    checked = sum(verify_corpus_dir(d, files) for d in dirs)
    rest: dict[Path, list[str]] = {}
    for f in files:
        path = Path(f).resolve()
        if not any(path.is_relative_to(d) for d in dirs):
            rest.setdefault(path.parent, []).append(f)
    return checked + sum(verify_corpus_dir(parent, fs, whole=False) for parent, fs in rest.items())
