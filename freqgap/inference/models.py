"""Model registry and loading: aliases from conf/models.yaml, offline, no remote code.

Every stage that runs a model (predictions, log-prob scoring) loads it here, so the
resolved id, revision, device, dtype and context length are recorded the same way and a
missing checkpoint fails with one clear message (how to fetch it, or use a directory).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from freqgap.errors import FreqgapError
from freqgap.config import load_conf
from freqgap.paths import REPO_ROOT

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


class ModelError(FreqgapError, ValueError):
    """A model cannot be resolved or loaded; the message says what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """What an alias or path resolves to before loading."""

    name: str                 # the alias, or the id/path as given
    source: str               # HF id or local directory passed to from_pretrained
    revision: str | None      # None for local directories
    gpu_dtype: str            # dtype to use on a GPU
    is_local: bool


@dataclass(frozen=True)
class ModelInfo:
    """What was actually loaded; recorded in prediction manifests."""

    name: str
    model_id: str
    revision: str | None
    device: str
    dtype: str
    context_length: int
    architecture: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    gpu_default = _DTYPES[conf.get("gpu_dtype", "bfloat16")]
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
                             _DTYPES[entry.get("dtype", gpu_default)], True)
        rev = revision if revision is not None else entry.get("revision")
        if entry.get("pythia") and rev is not None and rev != "main":
            _check_pythia_revision(name_or_path, rev, conf)
        return ModelSpec(name_or_path, entry["id"], rev,
                         _DTYPES[entry.get("dtype", gpu_default)], False)
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


def _offline_hint(spec: ModelSpec) -> str:
    rev = f" --revision {spec.revision}" if spec.revision else ""
    return (f"weights of {spec.source}{' @ ' + spec.revision if spec.revision else ''} are not "
            f"available offline. On a machine with network access run "
            f"`huggingface-cli download {spec.source}{rev}` (or `hf download ...`) and copy the "
            f"Hugging Face cache (HF_HOME) here, or pass --model /path/to/a/local/directory "
            f"holding config.json, the tokenizer and the weights")


def load_model(name_or_path: str, revision: str | None = None, device: str | None = None,
               dtype: str | None = None):
    """Load (model, tokenizer, ModelInfo) for inference: eval mode, pad token set.

    dtype defaults to float32 on the CPU and to the alias's GPU dtype (bfloat16 unless the
    registry says otherwise) on a GPU.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = resolve_model(name_or_path, revision)
    device = device or default_device()
    conf = load_conf("models")
    if dtype is None:
        dtype = spec.gpu_dtype if device.startswith("cuda") else _DTYPES[conf.get("cpu_dtype", "float32")]
    if dtype not in _DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use one of {', '.join(sorted(_DTYPES))}")
    dtype = _DTYPES[dtype]
    kwargs: dict[str, Any] = {"trust_remote_code": False}
    if spec.revision is not None and not spec.is_local:
        kwargs["revision"] = spec.revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(spec.source, dtype=getattr(torch, dtype),
                                                     **kwargs)
    except (OSError, ValueError) as exc:
        if spec.is_local:
            raise ModelError(f"{spec.source}: cannot load a causal LM and tokenizer from this "
                             f"directory: {exc}") from exc
        raise ModelError(f"{spec.name}: {_offline_hint(spec)} ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device)
    model.eval()
    info = ModelInfo(name=spec.name, model_id=spec.source, revision=spec.revision,
                     device=device, dtype=dtype, context_length=context_length(model.config),
                     architecture=type(model).__name__)
    return model, tokenizer, info
