"""Where a result's inputs are now, and whether they are still those it was made from.

The database of a gaps run keeps views over its inputs' Parquet (counts, instances,
predictions) with the absolute paths of the run, beside tables computed from them. Two
things can then go wrong when it is queried later:
- the folders were moved (a project directory renamed, results copied with their inputs):
  an input not at its recorded path is looked for at the same place relative to the
  results folder as at the run, and the views are re-pointed there for the session;
- an input was rewritten (a recount): live views would read the new files while the
  stored tables (ω per key, Δ) hold the old, so one query mixes two runs. The fingerprint
  in the input's manifest is compared with the one the result recorded.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from freqgap.errors import FreqgapError
from freqgap.manifest import MANIFEST_NAME, load_manifest_file


@dataclasses.dataclass
class InputState:
    """One input directory of a result: as recorded, and as found now."""

    recorded: str                 # the absolute path the run recorded
    stage: str | None
    recorded_fp: str | None
    path: Path | None = None      # where it is now (None: found nowhere)
    current_fp: str | None = None

    @property
    def moved(self) -> bool:
        return self.path is not None and str(self.path) != self.recorded

    @property
    def changed(self) -> bool:
        """Found, but not the input the result was made from."""
        return self.path is not None and self.current_fp != self.recorded_fp


def recorded_results_dir(manifest: dict[str, Any]) -> Path | None:
    """The results folder's absolute path at the run: the configured one if absolute, else
    the run's working directory (an input's recorded absolute path less the relative path
    it was given as) joined with it; None when nothing tells."""
    config = manifest.get("config") or {}
    results = Path(os.path.normpath(str(config.get("results") or "results")))
    if results.is_absolute():
        return results
    for key, record in zip(("counts", "instances"), manifest.get("inputs") or []):
        given = Path(os.path.normpath(str(config.get(key) or "")))
        absolute = Path(str(record.get("path") or ""))
        if given.is_absolute() or ".." in given.parts or not given.parts:
            continue
        if absolute.parts[-len(given.parts):] == given.parts:
            return Path(*absolute.parts[:-len(given.parts)]) / results
    return None


def _fingerprint(directory: Path) -> str | None:
    try:
        return load_manifest_file(directory / MANIFEST_NAME).get("fingerprint")
    except FreqgapError:
        return None


def locate_inputs(results_dir: Path, manifest: dict[str, Any]) -> list[InputState]:
    """Every recorded input, found at its recorded path or relative to the moved results."""
    old_results = recorded_results_dir(manifest)
    states = []
    for record in manifest.get("inputs") or []:
        if not isinstance(record, dict) or not record.get("path"):
            continue
        state = InputState(str(record["path"]), record.get("stage"), record.get("fingerprint"))
        candidates = [Path(state.recorded)]
        if old_results is not None:
            relative = os.path.relpath(state.recorded, old_results)
            candidates.append(Path(os.path.normpath(Path(results_dir).resolve() / relative)))
        for candidate in candidates:
            if (candidate / MANIFEST_NAME).is_file():
                state.path, state.current_fp = candidate, _fingerprint(candidate)
                break
        states.append(state)
    return states
