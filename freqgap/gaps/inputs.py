"""Find and vet the outputs of the earlier stages before any Δ is computed.

Every problem found here is an error that names the file or directory: a missing or
unfinished stage (no complete `_manifest.json`), a manifest of another stage, a dataset with
no Parquet files, counts other than those the instances were made from (their fingerprint,
docs/DATA.md) and predictions of other instances.
"""

from __future__ import annotations

import dataclasses
import glob
import sys
from pathlib import Path
from typing import Any

from freqgap.contract import (INSTANCE_STAGES, PREDICTION_STAGES, check_parquet,
                              refuse_partial_counts)
from freqgap.errors import FreqgapError, InputMismatchError
from freqgap.manifest import MANIFEST_NAME, read_manifest
from freqgap.gaps.options import GapsOptions

# Settings of the counts that change what a term or a co-occurrence is (SPEC §2). `unit` is
# recorded only by instances that need one (the QA suite's documents); a count records no
# unit when it is the window, the default.
COUNT_SETTINGS = ("window", "number_rule", "max_digits", "unit")
UNRECORDED_DEFAULTS = {"unit": "window"}


class GapsInputError(FreqgapError):
    """An input of `make gaps` is missing, empty or inconsistent; the message names it."""


class InputsMismatchError(GapsInputError, InputMismatchError):
    """Inputs of gaps that belong to different runs (counts, instances, predictions)."""


@dataclasses.dataclass
class GapsInputs:
    """Resolved input locations: one Parquet glob per dataset, plus the manifests read."""

    counts_dir: Path
    instances_dir: Path
    prediction_dirs: list[Path]
    datasets: dict[str, list[str]]          # view name -> Parquet globs (absolute)
    missing: list[str]                      # optional datasets that are absent
    manifests: dict[str, Any]
    compatibility: str                      # "checked", or how (check_counts_match_instances)

    def upstream(self) -> dict[str, Any]:
        """The fingerprints of the inputs used, and the counts the instances record."""
        inst = self.manifests["instances"]
        return {"counts": self.manifests["counts"]["fingerprint"],
                "instances": inst["fingerprint"],
                "instances_counts": (inst.get("upstream") or {}).get("counts"),
                "predictions": {str(d): self.manifests[str(d)]["fingerprint"]
                                for d in self.prediction_dirs}}

    def describe(self) -> list[dict[str, Any]]:
        """Manifest `inputs` records: each input directory with its stage's finish time and
        totals, which identify the run that wrote it."""
        dirs = [("counts", self.counts_dir), ("instances", self.instances_dir)]
        dirs += [(str(d), d) for d in self.prediction_dirs]
        return [{"path": str(d), "stage": self.manifests[key].get("stage"),
                 "fingerprint": self.manifests[key].get("fingerprint"),
                 "finished": self.manifests[key].get("finished"),
                 "stage_totals": self.manifests[key].get("totals")} for key, d in dirs]


def _complete_manifest(directory: Path, what: str, stage: str | tuple[str, ...]) -> dict[str, Any]:
    """The directory's checked manifest (freqgap.contract), or an error naming the stage to run."""
    if not directory.is_dir():
        raise GapsInputError(f"{directory}: {what} directory not found (run the stage that "
                             f"writes it, or point conf/gaps.yaml / the command line at it)")
    try:
        return read_manifest(directory, stage=stage)
    except InputMismatchError as exc:
        raise InputsMismatchError(f"{what}: {exc}") from None
    except FreqgapError as exc:
        raise GapsInputError(f"{what}: {exc}") from None


def dataset_glob(base: Path, name: str, contract: str | None = None) -> str | None:
    """The Parquet glob of dataset `name` under `base` (`name/`, `name.parquet` file or dir).

    Returns None when absent; an existing dataset without any Parquet file is an error.
    With `contract` (a dataset of freqgap/contract.py) every file's schema is checked
    first: an empty, damaged or wrongly typed file is one line naming it.
    """
    for cand in (base / name, base / f"{name}.parquet"):
        if cand.is_file():
            if contract:
                check_parquet(contract, cand, error=GapsInputError)
            return str(cand.resolve())
        if cand.is_dir():
            files = [p for p in cand.rglob("*.parquet") if p.is_file()]
            if not files:
                raise GapsInputError(f"{cand}: dataset has no Parquet files")
            if contract:
                check_parquet(contract, cand, error=GapsInputError)
            return str(cand.resolve() / "**" / "*.parquet")
    return None


def _setting_differences(counts_conf: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """`key=counts' value vs recorded value` for the settings that differ."""
    def have(key: str) -> Any:
        return counts_conf.get(key, UNRECORDED_DEFAULTS.get(key))

    return [f"{key}={have(key)!r} but the instances were made from counts with "
            f"{key}={recorded.get(key)!r}" for key in COUNT_SETTINGS
            if key in recorded and recorded.get(key) != have(key)]


def check_counts_match_instances(counts_dir: Path, counts_manifest: dict[str, Any],
                                 instances_dir: Path, instances_manifest: dict[str, Any],
                                 mismatch_ok: bool = False) -> str:
    """Error unless the counts are the very counts the instances were made from.

    The instances record those counts' fingerprint (`upstream.counts`, docs/DATA.md); other
    counts are refused even with the same settings (another corpus), unless `mismatch_ok`
    (`--counts-mismatch-ok`), when a warning is printed. Instances not made from counts (the
    suites': `upstream.counts` null) are checked by settings: window, number rule, digits
    and vocabulary. Returns what was checked, for the manifest.
    """
    counts_conf = counts_manifest.get("config") or {}
    recorded = instances_manifest.get("counts_settings") or {}
    want_fp = (instances_manifest.get("upstream") or {}).get("counts")
    have_fp = counts_manifest["fingerprint"]
    where = counts_dir / MANIFEST_NAME
    if want_fp is not None:
        if want_fp == have_fp:
            return "checked"
        diffs = _setting_differences(counts_conf, recorded)
        made_from = (instances_manifest.get("upstream") or {}).get("counts_dir")
        what = (f"counts were made with {diffs[0]}" if diffs else
                f"counts {have_fp[:12]} are not the counts {want_fp[:12]} ({made_from}) the "
                "instances were made from: same settings, other inputs (another corpus, or "
                "other versions of its files)")
        if not mismatch_ok:
            raise InputsMismatchError(
                f"{where}: {what} (instances {instances_dir}); pass the counts the instances "
                "were made from, rerun the instances stage on these counts, or accept them "
                "with --counts-mismatch-ok")
        print(f"WARNING: {where}: {what}; accepted (--counts-mismatch-ok)", file=sys.stderr)
        return "mismatch accepted (--counts-mismatch-ok)"
    for diff in _setting_differences(counts_conf, recorded):
        raise InputsMismatchError(f"{where}: counts were made with {diff} ({instances_dir / MANIFEST_NAME}); "
                                  "rerun one of the stages so that both use the same setting")
    want = set(recorded.get("vocab") or [])
    have = set(counts_conf.get("vocab") or [])
    if want and not want <= have:
        raise InputsMismatchError(
            f"{where}: the counts' vocab lacks {sorted(want - have)[:10]}, which the "
            f"instances in {instances_dir} need (count with --vocab {instances_dir}/vocab.yaml)")
    return "checked (settings and vocabulary: the instances record no counts fingerprint)"


def check_predictions_match_instances(directory: Path, manifest: dict[str, Any],
                                      instances_dir: Path, instances_fp: str) -> None:
    """Error if a predictions directory records other instances than the given ones; a
    warning when it records none (predicted from a prompts file on its own: its rows are
    joined by key, unchecked)."""
    recorded = (manifest.get("upstream") or {}).get("instances")
    if recorded is None:
        print(f"WARNING: {directory / MANIFEST_NAME}: predictions record no instances (made "
              "from a prompts file on its own), so they are joined to "
              f"{instances_dir} by key without a check; predict from the instances directory "
              "to have them checked", file=sys.stderr)
    if recorded is not None and recorded != instances_fp:
        raise InputsMismatchError(
            f"{directory / MANIFEST_NAME}: predictions of other instances ({recorded[:12]}) "
            f"than {instances_dir} ({instances_fp[:12]}); rerun predict on these instances' "
            "prompts, or pass the instances they were made from")


def resolve_inputs(opts: GapsOptions) -> GapsInputs:
    """Locate every dataset named in the options and check manifests and compatibility."""
    counts_dir = opts.path(opts.counts)
    instances_dir = opts.path(opts.instances)
    manifests: dict[str, Any] = {
        "counts": _complete_manifest(counts_dir, "counts", "count_terms"),
        "instances": _complete_manifest(instances_dir, "instances", INSTANCE_STAGES),
    }
    refuse_partial_counts(manifests["counts"], counts_dir)    # a dry run, counts by subset
    pattern = str(opts.path(opts.predictions))
    prediction_dirs = sorted(Path(p).resolve() for p in glob.glob(pattern) if Path(p).is_dir())
    if not prediction_dirs:
        raise GapsInputError(f"{pattern}: no predictions directories match (run the "
                             "inference stage, or set predictions in conf/gaps.yaml)")
    datasets: dict[str, list[str]] = {}
    missing: list[str] = []
    for name in ("unigrams", "pairs", "triples"):
        g = dataset_glob(counts_dir, name, contract=name)
        if g is None:
            if name == "unigrams":
                raise GapsInputError(f"{counts_dir}: no unigrams dataset (unigrams/)")
            missing.append(name)
        else:
            datasets[f"{name}_files"] = [g]
    for name in ("instances", "instance_terms"):
        g = dataset_glob(instances_dir, name, contract=name)
        if g is None:
            raise GapsInputError(f"{instances_dir}: no {name} dataset ({name}.parquet)")
        datasets[f"{name}_files"] = [g]
    pred_globs = []
    for d in prediction_dirs:
        manifests[str(d)] = _complete_manifest(d, "predictions", PREDICTION_STAGES)
        check_predictions_match_instances(d, manifests[str(d)], instances_dir,
                                          manifests["instances"]["fingerprint"])
        stage = manifests[str(d)].get("stage")
        g = dataset_glob(d.parent, d.name, contract="suite_predictions"
                         if stage == "suite_predictions" else "predictions")
        assert g is not None
        pred_globs.append(g)
    datasets["predictions_files"] = pred_globs
    compatibility = check_counts_match_instances(counts_dir, manifests["counts"], instances_dir,
                                                 manifests["instances"],
                                                 mismatch_ok=opts.counts_mismatch_ok)
    return GapsInputs(counts_dir=counts_dir.resolve(), instances_dir=instances_dir.resolve(),
                      prediction_dirs=prediction_dirs, datasets=datasets,
                      missing=missing, manifests=manifests, compatibility=compatibility)
