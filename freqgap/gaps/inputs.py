"""Find and vet the outputs of the earlier stages before any Δ is computed.

Every problem found here is an error that names the file or directory: a missing or
unfinished stage (no complete `_manifest.json`), a dataset with no Parquet files, and
counts made with another window or number rule than the instances were made from.
"""

from __future__ import annotations

import dataclasses
import glob
import sys
from pathlib import Path
from typing import Any

from freqgap.errors import FreqgapError
from freqgap.manifest import MANIFEST_NAME, read_manifest
from freqgap.gaps.options import GapsOptions

# Settings of the counts that change what a term or a co-occurrence is (SPEC §2).
COUNT_SETTINGS = ("window", "number_rule", "max_digits")


class GapsInputError(FreqgapError, ValueError):
    """An input of `make gaps` is missing, empty or inconsistent; the message names it."""


@dataclasses.dataclass
class GapsInputs:
    """Resolved input locations: one Parquet glob per dataset, plus the manifests read."""

    counts_dir: Path
    instances_dir: Path
    prediction_dirs: list[Path]
    datasets: dict[str, list[str]]          # view name -> Parquet globs (absolute)
    missing: list[str]                      # optional datasets that are absent
    manifests: dict[str, Any]
    compatibility: str                      # "checked" or why it could not be

    def describe(self) -> list[dict[str, Any]]:
        """Manifest `inputs` records: each input directory with its stage's finish time and
        totals, which identify the run that wrote it."""
        dirs = [("counts", self.counts_dir), ("instances", self.instances_dir)]
        dirs += [(str(d), d) for d in self.prediction_dirs]
        return [{"path": str(d), "stage": self.manifests[key].get("stage"),
                 "finished": self.manifests[key].get("finished"),
                 "stage_totals": self.manifests[key].get("totals")} for key, d in dirs]


def _complete_manifest(directory: Path, what: str) -> dict[str, Any]:
    """The directory's manifest, or an error that says which stage to run."""
    if not directory.is_dir():
        raise GapsInputError(f"{directory}: {what} directory not found (run the stage that "
                             f"writes it, or point conf/gaps.yaml / the command line at it)")
    try:
        return read_manifest(directory)
    except (FileNotFoundError, ValueError) as exc:
        raise GapsInputError(f"{what}: {exc}") from exc


def dataset_glob(base: Path, name: str) -> str | None:
    """The Parquet glob of dataset `name` under `base` (`name/`, `name.parquet` file or dir).

    Returns None when absent; an existing dataset without any Parquet file is an error.
    """
    for cand in (base / name, base / f"{name}.parquet"):
        if cand.is_file():
            return str(cand.resolve())
        if cand.is_dir():
            files = [p for p in cand.rglob("*.parquet") if p.is_file()]
            if not files:
                raise GapsInputError(f"{cand}: dataset has no Parquet files")
            return str(cand.resolve() / "**" / "*.parquet")
    return None


def _find_count_settings(manifest: Any) -> dict[str, Any] | None:
    """The counts configuration an instances manifest recorded, wherever it nests it.

    The instances stage copies the counts manifest's `config` into its own manifest; we look
    for the first mapping that holds `window` and `number_rule`, config first.
    """
    if not isinstance(manifest, dict):
        return None
    if "window" in manifest and "number_rule" in manifest:
        return manifest
    keys = sorted(manifest, key=lambda k: (k != "config", "count" not in str(k), str(k)))
    for key in keys:
        value = manifest[key]
        found = None
        if isinstance(value, dict):
            found = _find_count_settings(value)
        elif isinstance(value, list):
            for item in value:
                found = _find_count_settings(item)
                if found:
                    break
        if found:
            return found
    return None


def check_counts_match_instances(counts_dir: Path, counts_manifest: dict[str, Any],
                                 instances_dir: Path, instances_manifest: dict[str, Any]) -> str:
    """Error if the counts were made with another window/number rule than the instances.

    Returns "checked", or a reason when the instances manifest records no counts settings
    (then a warning is printed: the check could not be made).
    """
    counts_conf = counts_manifest.get("config") or {}
    recorded = _find_count_settings(instances_manifest)
    if recorded is None:
        reason = (f"{instances_dir / MANIFEST_NAME} records no counts settings (window, "
                  "number_rule); counts/instances compatibility not checked")
        print(f"WARNING: {reason}", file=sys.stderr)
        return reason
    for key in COUNT_SETTINGS:
        if key in recorded and key in counts_conf and recorded[key] != counts_conf[key]:
            raise GapsInputError(
                f"{counts_dir / MANIFEST_NAME}: counts were made with {key}={counts_conf[key]!r} "
                f"but the instances in {instances_dir} were made from counts with "
                f"{key}={recorded[key]!r} ({instances_dir / MANIFEST_NAME}); rerun one of the "
                "stages so that both use the same setting")
    want = set(recorded.get("vocab") or [])
    have = set(counts_conf.get("vocab") or [])
    if want and have and not want <= have:
        raise GapsInputError(
            f"{counts_dir / MANIFEST_NAME}: the counts' vocab lacks {sorted(want - have)}, "
            f"which the instances in {instances_dir} assume")
    return "checked"


def resolve_inputs(opts: GapsOptions) -> GapsInputs:
    """Locate every dataset named in the options and check manifests and compatibility."""
    counts_dir = opts.path(opts.counts)
    instances_dir = opts.path(opts.instances)
    manifests: dict[str, Any] = {
        "counts": _complete_manifest(counts_dir, "counts"),
        "instances": _complete_manifest(instances_dir, "instances"),
    }
    pattern = str(opts.path(opts.predictions))
    prediction_dirs = sorted(Path(p).resolve() for p in glob.glob(pattern) if Path(p).is_dir())
    if not prediction_dirs:
        raise GapsInputError(f"{pattern}: no predictions directories match (run the "
                             "inference stage, or set predictions in conf/gaps.yaml)")
    datasets: dict[str, list[str]] = {}
    missing: list[str] = []
    for name in ("unigrams", "pairs", "triples"):
        g = dataset_glob(counts_dir, name)
        if g is None:
            if name == "unigrams":
                raise GapsInputError(f"{counts_dir}: no unigrams dataset (unigrams/)")
            missing.append(name)
        else:
            datasets[f"{name}_files"] = [g]
    for name in ("instances", "instance_terms"):
        g = dataset_glob(instances_dir, name)
        if g is None:
            raise GapsInputError(f"{instances_dir}: no {name} dataset ({name}.parquet)")
        datasets[f"{name}_files"] = [g]
    pred_globs = []
    for d in prediction_dirs:
        manifests[str(d)] = _complete_manifest(d, "predictions")
        g = dataset_glob(d.parent, d.name)
        assert g is not None
        pred_globs.append(g)
    datasets["predictions_files"] = pred_globs
    compatibility = check_counts_match_instances(counts_dir, manifests["counts"], instances_dir,
                                                 manifests["instances"])
    return GapsInputs(counts_dir=counts_dir.resolve(), instances_dir=instances_dir.resolve(),
                      prediction_dirs=prediction_dirs, datasets=datasets,
                      missing=missing, manifests=manifests, compatibility=compatibility)
