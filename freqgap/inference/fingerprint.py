"""The predictions fingerprint: everything the rows depend on, checked before any resume.

A kill-and-rerun must continue the same computation or refuse: chunks made with another
prompts file, checkpoint, dtype, decoding length, stop rule or parse rule must never sit
beside new ones under one manifest. The fields are written to `<dir>/_fingerprint.json`
before the first chunk and into the manifest (`settings_fingerprint`: their sha256,
`config.fingerprint_fields`: the fields) at the end; the manifest's own `fingerprint` is
the data contract's (freqgap/contract.py). Batch size and prefix reuse are
fields only when the model is not batch-invariant (16-bit or GPU arithmetic, where padding
and shapes can flip a near-tied argmax); on the CPU in float32 they provably change
nothing (tests/inference/test_generate.py) and a resume may change them.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freqgap.errors import InputMismatchError
from freqgap.inference import parse
from freqgap.inference.lm import LM, StopRule

if TYPE_CHECKING:
    from freqgap.inference.hf import HFIdentity
from freqgap.manifest import MANIFEST_NAME, atomic_write_text, upstream_fingerprint

FINGERPRINT_NAME = "_fingerprint.json"


def parse_rule_version() -> str:
    """sha256 of the answer-parsing code (freqgap/inference/parse.py): rows store parsed
    answers and correctness, so a changed rule means changed rows."""
    return hashlib.sha256(inspect.getsource(parse).encode()).hexdigest()


def device_class(device: str) -> str:
    """cpu, cuda, mps, …: the index of a GPU does not change results, its kind does."""
    return device.split(":", 1)[0]


def fingerprint_fields(*, prompts_sha256: str, lm: "LM | HFIdentity", label: str,
                       revision: str,
                       max_new_tokens: int, stop: StopRule, reuse_prefix: bool,
                       batch_size: int | None, shard: tuple[int, int] | None) -> dict[str, Any]:
    """The fields of one predictions run (JSON-ready). `lm` is a loaded LM, or what one
    would report (freqgap.inference.hf.HFIdentity) when checking a finished directory."""
    fields: dict[str, Any] = {
        "prompts_sha256": prompts_sha256,
        "model": label, "revision": revision, "model_id": lm.model_id,
        "backend": lm.backend_name,
        "weights_sha256": lm.weights_sha256, "config_sha256": lm.config_sha256,
        "dtype": lm.dtype, "device_class": device_class(lm.device),
        "decoding": f"greedy, max_new_tokens={max_new_tokens}, {stop.describe()}",
        "parse_rule_sha256": parse_rule_version(),
        "shard": list(shard) if shard else None,
    }
    if not lm.batch_invariant:
        fields["batching"] = {"batch_size": batch_size, "reuse_prefix": reuse_prefix}
    return fields


def digest(fields: dict[str, Any]) -> str:
    """sha256 of the fields' canonical JSON."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`field: old → new` for every field that differs (absent reads as None)."""
    def show(v: Any) -> str:
        if isinstance(v, str):
            return v[:12] + "…" if len(v) == 64 else v     # sha256 digests shortened
        return json.dumps(v, sort_keys=True)

    return [f"{key}: {show(old.get(key))} → {show(new.get(key))}"
            for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def read_fingerprint(directory: str | Path) -> dict[str, Any] | None:
    path = Path(directory) / FINGERPRINT_NAME
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise InputMismatchError(f"{path}: damaged; use --force to discard this directory's "
                                 "predictions and start again") from None


def write_fingerprint(directory: str | Path, fields: dict[str, Any]) -> None:
    atomic_write_text(Path(directory) / FINGERPRINT_NAME,
                      json.dumps(fields, indent=2, sort_keys=True) + "\n")


# Tables an instances run writes beside prompts.parquet (freqgap/contract.py).
INSTANCE_TABLES = ("instances.parquet", "instance_terms.parquet")


def prompts_upstream(prompts_file: str | Path) -> str | None:
    """The fingerprint of the instances directory holding `prompts_file` (recorded as the
    predictions' `upstream.instances`, which gaps checks). A directory holding instance
    tables but no manifest is an instances run that did not finish (its tables and prompts
    may be of two runs): refused. A prompts file on its own has none (None)."""
    directory = Path(prompts_file).parent
    beside = [n for n in INSTANCE_TABLES if (directory / n).exists()]
    if beside and not (directory / MANIFEST_NAME).exists():
        from freqgap.inference.prompts import PromptsError

        raise PromptsError(f"{directory}: holds {beside[0]} but no {MANIFEST_NAME}: the "
                           "instances run that wrote it did not finish, so its prompts may "
                           "not match its instances; rerun freqgap instances")
    return upstream_fingerprint(directory, "instances")


def refuse_if_different(directory: str | Path, stored: dict[str, Any],
                        fields: dict[str, Any]) -> None:
    """One line naming the settings that differ, and what to do."""
    diff = differences(stored, fields)
    if diff:
        raise InputMismatchError(
            f"{directory}: holds predictions made with other settings ({'; '.join(diff)}); "
            "use a new --out/--name, or --force to discard them and start again")
