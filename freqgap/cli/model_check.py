"""A hub model that is not in the local cache is refused before any work, in one line.

Offline (the default, freqgap.cli.offline) transformers cannot fetch it anyway; saying so
before the prompts are read names the cache directory that was searched and the two ways
out (download it, or opt in to the network), instead of a loader error after the setup.
"""

from __future__ import annotations

from freqgap.cli.offline import ONLINE_ENV, ONLINE_FLAG, is_offline
from freqgap.errors import FreqgapError, UsageError


def cached_or_refuse(model: str, revisions: list[str | None]) -> None:
    """Raise UsageError when `model` is a hub id whose config.json is not cached for one of
    `revisions` and the hub is off; local directories and aliases of them pass."""
    if not is_offline():
        return
    from huggingface_hub import constants, try_to_load_from_cache

    from freqgap.inference.models import resolve_model

    for revision in revisions:
        try:
            spec = resolve_model(model, revision)
        except FreqgapError:
            return          # not a model name at all: the stage says so in its own order
        if spec.is_local:
            return
        rev = spec.revision or "main"
        found = try_to_load_from_cache(spec.source, "config.json", revision=rev)
        if not isinstance(found, str):
            raise UsageError(
                f"--model {model}: {spec.source} @ {rev} is not in the Hugging Face cache "
                f"{constants.HF_HUB_CACHE} (searched offline); download it with `hf download "
                f"{spec.source} --revision {rev}`, rerun with {ONLINE_FLAG} (or {ONLINE_ENV}=1) "
                "to let freqgap fetch it, set HF_HOME to the cache that holds it, or pass a "
                "local model directory")
