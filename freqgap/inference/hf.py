"""The transformers backend of the model interface (freqgap.inference.lm.LM).

Wraps what the project already proved: batched greedy decoding with a shared-prefix
key/value cache and adaptive halving of the batch on out-of-memory
(freqgap.inference.generate), and batched log-prob scoring (freqgap.inference.logprobs).
Loading is offline and without remote code; the weight files are checked (truncation,
recorded sha256) and their sha256 is known before the first request.
"""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from freqgap.config import load_conf
from freqgap.inference.checksums import CheckpointError, config_sha256, verify_weights
from freqgap.inference.lm import (LM, ContinuationScore, GenerateRequest, LoglikelihoodRequest,
                                  NextTokenLogprobs, StopRule, TopToken)
from freqgap.inference.models import (DTYPES, ModelError, ModelSpec, context_length,
                                      default_device, offline_hint, resolve_model)


def _resolve_dtype(dtype: str | None, device: str, spec: ModelSpec) -> str:
    conf = load_conf("models")
    if dtype is None:
        dtype = spec.gpu_dtype if device.startswith("cuda") else conf.get("cpu_dtype", "float32")
    if dtype not in DTYPES:
        raise ModelError(f"--dtype {dtype!r}: unknown; use one of {', '.join(sorted(DTYPES))}")
    return DTYPES[dtype]


def _snapshot_dir(spec: ModelSpec) -> Path:
    """The local directory holding the model's files (a hub model's cache snapshot)."""
    if spec.is_local:
        return Path(spec.source)
    from transformers.utils.hub import cached_file

    kwargs = {"revision": spec.revision} if spec.revision else {}
    config = cached_file(spec.source, "config.json", local_files_only=True, **kwargs)
    return Path(config).parent


@contextlib.contextmanager
def library_output(verbose: bool):
    """transformers' logging and progress bars for the duration (restored after): hidden
    (errors only, no bars) by default; with `verbose` (--verbose) its INFO logs (the files
    read, the model config) and loading bars, as Spark shows INFO with --verbose."""
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    if verbose:
        hf_logging.set_verbosity_info()
        hf_logging.enable_progress_bar()
    else:
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()
        else:
            hf_logging.disable_progress_bar()


def default_batch_size(device: str) -> int:
    """At most 2048 prompts per forward pass on a GPU, fewer where free memory holds fewer
    (freqgap.inference.memory; the shots' keys and values are held once), 32 on the CPU."""
    return 2048 if device.startswith("cuda") else 32


def _revision_label(spec: ModelSpec) -> str:
    return spec.revision if spec.revision else ("local" if spec.is_local else "main")


def _prepare(name_or_path: str, revision: str | None, device: str | None, dtype: str | None):
    """(spec, device, dtype, files directory, weights record, config sha256) before loading:
    a local directory or a cached hub snapshot is checked here (truncation, recorded
    sha256), so that transformers never sees a broken file; an uncached hub model gives
    None for the last three (hashed after it is loaded)."""
    spec = resolve_model(name_or_path, revision)
    device = device or default_device()
    dtype = _resolve_dtype(dtype, device, spec)
    if spec.is_local:
        if not (Path(spec.source) / "config.json").is_file():
            raise ModelError(f"{spec.source}: cannot load a causal LM and tokenizer from this "
                             "directory: it has no config.json")
        files_dir: Path | None = Path(spec.source)
    else:
        try:
            files_dir = _snapshot_dir(spec)
        except OSError:
            files_dir = None        # not cached: the load says how to fetch it
    if files_dir is None:
        return spec, device, dtype, None, None, None
    return spec, device, dtype, files_dir, verify_weights(files_dir), config_sha256(files_dir)


@dataclass(frozen=True)
class HFIdentity:
    """What a transformers model's results depend on, known without loading it (the same
    properties an HFCausalLM reports, for the settings fingerprint)."""

    name: str
    model_id: str
    revision: str
    dtype: str
    device: str
    weights: dict[str, Any] | None
    config_sha256: str | None
    batch_size: int
    backend_name: str = "HFCausalLM"

    @property
    def weights_sha256(self) -> str | None:
        return self.weights["sha256"] if self.weights else None

    @property
    def batch_invariant(self) -> bool:
        return self.device == "cpu" and self.dtype == "float32"


class HFCausalLM(LM):
    """A transformers causal LM in eval mode, with its tokenizer (pad token set)."""

    def __init__(self, model, tokenizer, *, name: str, model_id: str, revision: str,
                 weights: dict[str, Any] | None = None, config_sha: str | None = None,
                 batch_size: int | None = None,
                 reuse_prefix: bool = True,
                 on_batch_size_change: Callable[[int], None] | None = None,
                 shared_attention: bool = True) -> None:
        import torch

        self.model = model
        self._tokenizer = tokenizer
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._name, self._model_id, self._revision = name, model_id, revision
        self.weights = weights
        self._config_sha = config_sha
        self._device = str(next(model.parameters()).device)
        self._dtype = str(next(model.parameters()).dtype).replace("torch.", "")
        self._context = context_length(model.config)
        if batch_size is not None and batch_size < 1:
            raise ModelError(f"--batch-size {batch_size}: must be at least 1")
        self.batch_size = batch_size or default_batch_size(self._device)
        self.reuse_prefix = reuse_prefix
        self.shared_attention = shared_attention   # False: per-row prefix copies (benchmarks)
        self.on_batch_size_change = on_batch_size_change
        self._generators: dict[tuple[StopRule, int], Any] = {}
        from freqgap.inference.generate import GroupStats

        self.stats = GroupStats()           # generate_until's prefix reuse
        self.scoring_stats = GroupStats()   # next_token_logprobs' prefix reuse
        self._torch = torch

    # ---------------------------------------------------------------- loading
    @classmethod
    def load(cls, name_or_path: str, revision: str | None = None, device: str | None = None,
             dtype: str | None = None, batch_size: int | None = None, reuse_prefix: bool = True,
             on_batch_size_change: Callable[[int], None] | None = None,
             verbose: bool = False) -> "HFCausalLM":
        """Resolve (alias, hub id, directory), check the weights, load in eval mode.

        dtype defaults to float32 on the CPU and to the alias's GPU dtype (bfloat16 unless
        conf/models.yaml says otherwise) on a GPU. transformers' loading bars and warnings are
        hidden (stderr stays for freqgap's progress lines and one-line errors) unless
        `verbose` (see library_output).
        """
        import torch
        from safetensors import SafetensorError
        from transformers import AutoModelForCausalLM, AutoTokenizer

        spec, device, dtype, files_dir, weights, config_sha = _prepare(name_or_path, revision,
                                                                       device, dtype)
        kwargs: dict[str, Any] = {"trust_remote_code": False}
        if spec.revision is not None and not spec.is_local:
            kwargs["revision"] = spec.revision
        try:
            with library_output(verbose):
                tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
                model = AutoModelForCausalLM.from_pretrained(
                    spec.source, dtype=getattr(torch, dtype), **kwargs)
        except SafetensorError as exc:
            raise CheckpointError(f"{spec.source}: corrupt safetensors weights ({exc}); "
                                  "download or copy the checkpoint again") from exc
        except (OSError, ValueError) as exc:
            if spec.is_local:
                raise ModelError(f"{spec.source}: cannot load a causal LM and tokenizer from "
                                 f"this directory: {str(exc).splitlines()[0] if str(exc) else exc!r}") from exc
            raise ModelError(f"{spec.name}: {offline_hint(spec)} ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc
        if files_dir is None:   # a hub model fetched just now: hash the files it was loaded from
            files_dir = _snapshot_dir(spec)
            weights, config_sha = verify_weights(files_dir), config_sha256(files_dir)
        model.to(device)
        model.eval()
        return cls(model, tokenizer, name=spec.name, model_id=spec.source,
                   revision=_revision_label(spec), weights=weights, config_sha=config_sha,
                   batch_size=batch_size, reuse_prefix=reuse_prefix,
                   on_batch_size_change=on_batch_size_change)

    @staticmethod
    def identity(name_or_path: str, revision: str | None = None, device: str | None = None,
                 dtype: str | None = None, batch_size: int | None = None) -> "HFIdentity | None":
        """What a load would report for fingerprints, without loading the weights (files
        hashed through the cache); None when a hub model is not in the local cache."""
        spec, device, dtype, files_dir, weights, config_sha = _prepare(name_or_path, revision,
                                                                       device, dtype)
        if files_dir is None:
            return None
        return HFIdentity(name=spec.name, model_id=spec.source, revision=_revision_label(spec),
                          dtype=dtype, device=device, weights=weights, config_sha256=config_sha,
                          batch_size=batch_size or default_batch_size(device))

    def with_batch_size(self, batch_size: int) -> "HFCausalLM":
        """The same loaded model and tokenizer with another batch size (no reload)."""
        return type(self)(self.model, self._tokenizer, name=self._name, model_id=self._model_id,
                          revision=self._revision, weights=self.weights,
                          config_sha=self._config_sha, batch_size=batch_size,
                          reuse_prefix=self.reuse_prefix,
                          on_batch_size_change=self.on_batch_size_change,
                          shared_attention=self.shared_attention)

    def close(self) -> None:
        self.model = None
        self._generators.clear()
        gc.collect()
        if self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()

    # ---------------------------------------------------------------- identity
    name = property(lambda self: self._name)
    model_id = property(lambda self: self._model_id)
    revision = property(lambda self: self._revision)
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)
    max_length = property(lambda self: self._context)
    tokenizer = property(lambda self: self._tokenizer)

    @property
    def weights_sha256(self) -> str | None:
        return self.weights["sha256"] if self.weights else None

    @property
    def config_sha256(self) -> str | None:
        return self._config_sha

    @property
    def batch_invariant(self) -> bool:
        return self._device == "cpu" and self._dtype == "float32"

    @property
    def num_parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))

    @property
    def architecture(self) -> str:
        return type(self.model).__name__

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "architecture": self.architecture,
                "weights": self.weights}

    def encode(self, text: str) -> list[int]:
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of many texts at once (the tokenizer's fast batch path)."""
        if not texts:
            return []
        return [list(t) for t in self._tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=True)

    # ---------------------------------------------------------------- requests
    def generator(self, stop: StopRule, max_new_tokens: int):
        """The decoder for one (stop rule, length); stop masks are built once per rule."""
        from freqgap.inference.generate import Generator

        key = (stop, max_new_tokens)
        gen = self._generators.get(key)
        if gen is None:
            gen = Generator(self.model, self._tokenizer, max_new_tokens=max_new_tokens,
                            batch_size=self.batch_size, stop=stop,
                            on_batch_size_change=self._batch_changed,
                            shared_attention=self.shared_attention)
            self._generators[key] = gen
        gen.batch_size = self.batch_size
        return gen

    def _batch_changed(self, size: int) -> None:
        self.batch_size = size
        if self.on_batch_size_change:
            self.on_batch_size_change(size)

    def generate_until(self, requests: Sequence[GenerateRequest]) -> list[str]:
        groups: dict[tuple[str, StopRule, int], list[int]] = {}
        for i, r in enumerate(requests):
            if r.max_new_tokens < 1:
                raise ModelError(f"max_new_tokens {r.max_new_tokens}: must be at least 1")
            groups.setdefault((r.prefix, r.stop, r.max_new_tokens), []).append(i)
        out = [""] * len(requests)
        for (prefix, stop, max_new), idx in groups.items():
            gen = self.generator(stop, max_new)
            texts = gen.generate_group(prefix, [requests[i].context for i in idx],
                                       reuse=self.reuse_prefix and bool(prefix),
                                       stats=self.stats)
            for i, t in zip(idx, texts):
                out[i] = t
        return out

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[ContinuationScore]:
        from freqgap.inference.logprobs import continuation_logprobs

        return continuation_logprobs(self.model, self._tokenizer,
                                     [r.context for r in requests],
                                     [r.continuation for r in requests],
                                     batch_size=min(self.batch_size, 64))

    def next_token_logprobs(self, contexts: Sequence[str], candidates: Sequence[int | str] = (),
                            top_k: int | None = None, prefix: str = "") -> list[NextTokenLogprobs]:
        from freqgap.inference.logprobs import next_token_scores

        ids = self.candidate_ids(candidates)
        rows = next_token_scores(self.model, self._tokenizer, list(contexts), ids, top_k,
                                 batch_size=min(self.batch_size, 64),
                                 prefix=prefix if self.reuse_prefix else "",
                                 stats=self.scoring_stats)
        texts: dict[int, str] = {}
        out = []
        for picked, top, cut in rows:
            for t, _ in top:
                if t not in texts:
                    texts[t] = self._tokenizer.decode([t])
            out.append(NextTokenLogprobs(tuple(picked),
                                         tuple(TopToken(t, texts[t], lp) for t, lp in top), cut))
        return out
