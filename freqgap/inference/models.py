"""Model names: aliases from conf/models.yaml, Hugging Face ids, local directories.

Resolution is separate from loading (freqgap.inference.hf) so that a bad name or Pythia
revision fails in milliseconds, before any output directory exists or any weights are
read, with the list of known names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freqgap.errors import FreqgapError
from freqgap.config import load_conf
from freqgap.paths import REPO_ROOT

DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


class ModelError(FreqgapError):
    """A model cannot be resolved or loaded; the message says what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """What an alias or path resolves to before loading."""

    name: str                 # the alias, or the id/path as given
    source: str               # HF id or local directory passed to from_pretrained
    revision: str | None      # None for local directories
    gpu_dtype: str            # dtype to use on a GPU
    is_local: bool


def pythia_steps(conf: dict[str, Any] | None = None) -> list[int]:
    """The training steps with a public Pythia checkpoint (154 of them)."""
    conf = load_conf("models") if conf is None else conf
    steps_conf = conf["pythia"]["steps"]
    steps = list(steps_conf["log_spaced"])
    steps += list(range(steps_conf["every"], steps_conf["last"] + 1, steps_conf["every"]))
    return sorted(set(steps))


def known_aliases(conf: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """All aliases (lower case) with their entries, Pythia expanded."""
    conf = load_conf("models") if conf is None else conf
    out = {name.lower(): dict(entry) for name, entry in conf.get("aliases", {}).items()}
    pythia = conf.get("pythia")
    if pythia:
        for size in pythia["sizes"]:
            for suffix in ("", "-deduped"):
                out[f"pythia-{size}{suffix}"] = {
                    "id": pythia["id_template"].format(size=size, suffix=suffix),
                    "pythia": True}
    return out


def resolve_model(name_or_path: str, revision: str | None = None,
                  conf: dict[str, Any] | None = None) -> ModelSpec:
    """Alias, HF id (`owner/name`) or local directory → what to load."""
    conf = load_conf("models") if conf is None else conf
    gpu_default = DTYPES[conf.get("gpu_dtype", "bfloat16")]
    aliases = known_aliases(conf)
    entry = aliases.get(name_or_path.lower())
    if entry is not None:
        if "path" in entry:
            path = Path(entry["path"])
            path = path if path.is_absolute() else REPO_ROOT / path
            if not path.is_dir():
                raise ModelError(
                    f"model alias {name_or_path!r} points at {path}, which does not exist; "
                    "build or fetch it first (see docs/inference.md)")
            return ModelSpec(name_or_path, str(path), None,
                             DTYPES[entry.get("dtype", gpu_default)], True)
        rev = revision if revision is not None else entry.get("revision")
        if entry.get("pythia") and rev is not None and rev != "main":
            _check_pythia_revision(name_or_path, rev, conf)
        return ModelSpec(name_or_path, entry["id"], rev,
                         DTYPES[entry.get("dtype", gpu_default)], False)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return ModelSpec(name_or_path, str(path), None, gpu_default, True)
    if name_or_path.startswith((".", "/", "~")) or path.exists():
        raise ModelError(f"{name_or_path}: not a directory holding a model (config.json, "
                         "tokenizer and weights)")
    if name_or_path.count("/") != 1:
        known = ", ".join(sorted(aliases))
        raise ModelError(
            f"unknown model {name_or_path!r}: not an alias, not an existing directory and "
            f"not a Hugging Face id (owner/name). Known aliases: {known}")
    return ModelSpec(name_or_path, name_or_path, revision, gpu_default, False)


def _check_pythia_revision(name: str, revision: str, conf: dict[str, Any]) -> None:
    steps = pythia_steps(conf)
    if revision.startswith("step") and revision[4:].isdigit() and int(revision[4:]) in steps:
        return
    raise ModelError(
        f"{name}: revision {revision!r} is not a Pythia checkpoint; use main or stepN with N "
        f"one of {steps[0]}, {steps[1]}, {steps[2]}, …, {steps[-2]}, {steps[-1]} "
        f"({len(steps)} checkpoints: powers of two up to 512, then every 1000)")


def default_device() -> str:
    """cuda when a GPU is visible, else cpu."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def context_length(config: Any) -> int:
    """The longest input the model's position embeddings allow."""
    for attr in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ModelError(f"cannot tell the context length of a {type(config).__name__}")


def offline_hint(spec: ModelSpec) -> str:
    rev = f" --revision {spec.revision}" if spec.revision else ""
    return (f"weights of {spec.source}{' @ ' + spec.revision if spec.revision else ''} are not "
            f"available offline. On a machine with network access run "
            f"`huggingface-cli download {spec.source}{rev}` (or `hf download ...`) and copy the "
            f"Hugging Face cache (HF_HOME) here, or pass --model /path/to/a/local/directory "
            f"holding config.json, the tokenizer and the weights")
