"""The model interface every stage runs models through (lm-evaluation-harness style).

A backend (transformers today; vLLM or an API later) implements three request types:

- `generate_until(requests)`: greedy continuations, each ended by its `StopRule` or its
  `max_new_tokens`;
- `loglikelihood(requests)`: log p(continuation | context) per subword and whether the
  continuation is the greedy one;
- `next_token_logprobs(contexts, candidates, top_k)`: log p of given candidate tokens as the
  next token, and optionally the model's own top-k next tokens.

Callers (predictions, suites) never touch a backend's internals: stop rules are data, and
what a result depends on (model id, revision, dtype, device class, weights' sha256) is a
property of the LM, recorded in manifests and fingerprints. `get_lm` is the registry:
aliases from conf/models.yaml, Hugging Face ids and local directories for backend "hf";
`fake` (freqgap.inference.fake.FakeLM) is a deterministic LM for tests. This module
imports neither torch nor transformers.
"""

from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from freqgap.errors import FreqgapError
from freqgap.inference.models import ModelError


@dataclass(frozen=True)
class StopRule:
    """When greedy generation ends (besides `max_new_tokens`).

    Generation ends *after* the first generated token whose decoded text contains one of
    `token_contains` (that token is kept in the continuation, as the paper's newline is),
    or at the end-of-sequence token when `eos` is true (eos is not part of the decoded
    text). Matching is per token, on the token's own text, not across token boundaries.
    """

    token_contains: tuple[str, ...] = ("\n",)
    eos: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.token_contains, str):
            raise TypeError("StopRule.token_contains is a tuple of strings, not a string")
        if any(not s for s in self.token_contains):
            raise ValueError("StopRule: an empty stop string would stop at every token")

    def describe(self) -> str:
        """A stable text form, for manifests and fingerprints."""
        parts = [f"token contains {json.dumps(s)}" for s in self.token_contains]
        if self.eos:
            parts.append("eos")
        return "stop after: " + (" | ".join(parts) if parts else "max_new_tokens only")


NEWLINE = StopRule(("\n",))        # the paper's rule: the first token holding a newline
PARAGRAPH = StopRule(("\n\n",))    # chain of thought: the first token holding a blank line


@dataclass(frozen=True)
class GenerateRequest:
    """Greedy continuation of `context`.

    `prefix` is a hint: a leading part of `context` shared by many requests (the few-shot
    shots) whose key/value cache a backend may compute once. Results are identical with or
    without it (a backend verifies the prefix's tokens start the context's tokens).
    """

    context: str
    max_new_tokens: int = 5
    stop: StopRule = NEWLINE
    prefix: str = ""


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """log p(continuation | context). Context and continuation are encoded separately and
    concatenated, so write the leading space into the continuation (" crops"). An empty
    context stands for the BOS (else EOS) token."""

    context: str
    continuation: str


@dataclass(frozen=True)
class ContinuationScore:
    """Per-subword natural-log probabilities of one continuation given its context."""

    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]
    truncated: int = 0        # context tokens dropped on the left to fit the model
    is_greedy: bool = False   # every continuation token was the argmax at its position

    @property
    def total(self) -> float:
        """Summed log-probability (log p of the whole continuation)."""
        return float(sum(self.token_logprobs))

    @property
    def mean(self) -> float:
        """Mean log-probability per subword token."""
        return self.total / len(self.token_logprobs)

    def surprisal_bits(self, reduce: str = "sum") -> float:
        """-log2 p, summed over subwords (`sum`) or per subword (`mean`)."""
        import math

        if reduce not in ("sum", "mean"):
            raise ValueError(f"reduce must be sum or mean, got {reduce!r}")
        value = self.total if reduce == "sum" else self.mean
        return -value / math.log(2)


@dataclass(frozen=True)
class TopToken:
    """One of the model's most likely next tokens."""

    id: int
    text: str       # the token decoded alone
    logprob: float


@dataclass(frozen=True)
class NextTokenLogprobs:
    """The next-token distribution after one context, as far as asked for."""

    candidates: tuple[float, ...]              # log p of each candidate, in the order given
    top: tuple[TopToken, ...] = field(default=())  # top_k tokens, most likely first
    truncated: int = 0                         # context tokens dropped on the left


class TokenizationError(FreqgapError):
    """A candidate string is not exactly one token of this model's vocabulary."""


class LM(ABC):
    """A causal language model behind the three request types.

    Results come back in the order of the requests. Log-probabilities are natural logs
    computed in float32 or wider. Backends batch and cache as they like, but a result
    must not depend on the other requests of the call (batched = one by one) whenever
    `batch_invariant` is true.
    """

    # ---------------------------------------------------------------- identity
    @property
    @abstractmethod
    def name(self) -> str:
        """The alias, id or path the model was asked for."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """What was loaded: a Hugging Face id or a local directory."""

    @property
    @abstractmethod
    def revision(self) -> str:
        """The branch/tag/commit loaded; `main` for a hub default, `local` for a directory."""

    @property
    @abstractmethod
    def dtype(self) -> str:
        """Compute dtype: float32, bfloat16, float16 (a backend may say more)."""

    @property
    @abstractmethod
    def device(self) -> str:
        """cpu, cuda, cuda:1, … or an API's name."""

    @property
    @abstractmethod
    def max_length(self) -> int:
        """Longest input in tokens, prompt plus generated tokens."""

    @property
    @abstractmethod
    def weights_sha256(self) -> str | None:
        """sha256 over the weight files (see freqgap.inference.checksums), None if unknown
        (an API)."""

    @property
    def backend_name(self) -> str:
        """The backend's class name (recorded in fingerprints)."""
        return type(self).__name__

    @property
    def config_sha256(self) -> str | None:
        """sha256 over the non-weight files that change results (model config, tokenizer),
        None if not applicable."""
        return None

    @property
    def batch_invariant(self) -> bool:
        """True when batching, padding and prefix reuse provably leave results unchanged
        (float32 on the CPU for the transformers backend)."""
        return False

    @property
    def num_parameters(self) -> int | None:
        """Parameter count (the x axis of scaling plots), None if unknown."""
        return None

    @property
    def tokenizer(self) -> Any:
        """The backend's tokenizer object (a transformers tokenizer for "hf"), or None."""
        return None

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of `text` alone, without special tokens."""

    @abstractmethod
    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids, special tokens dropped."""

    def describe(self) -> dict[str, Any]:
        """What a manifest records about the model."""
        return {"name": self.name, "model_id": self.model_id, "revision": self.revision,
                "device": self.device, "dtype": self.dtype, "context_length": self.max_length,
                "weights_sha256": self.weights_sha256, "config_sha256": self.config_sha256,
                "parameters": self.num_parameters,
                "backend": self.backend_name}

    def close(self) -> None:
        """Free the model's memory (a run over many revisions loads one after another)."""

    # ---------------------------------------------------------------- requests
    @abstractmethod
    def generate_until(self, requests: Sequence[GenerateRequest]) -> list[str]:
        """Greedy continuation text of each request (stop token kept, eos dropped)."""

    @abstractmethod
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[ContinuationScore]:
        """Per-subword log p of each continuation given its context. A context too long
        for the model is cut on the left (recorded in `truncated`); a continuation that
        alone does not fit, or that encodes to no tokens, is an error."""

    @abstractmethod
    def next_token_logprobs(self, contexts: Sequence[str],
                            candidates: Sequence[int | str] = (),
                            top_k: int | None = None,
                            prefix: str = "") -> list[NextTokenLogprobs]:
        """log p(next token | context) of each candidate, and the top_k next tokens.

        A candidate is a token id, or a string that must encode to exactly one token
        (else `TokenizationError`; pass `lm.encode(s)[0]` for a first-subword rule). An
        empty context stands for BOS (else EOS); a long one is cut on the left.
        `prefix` is the hint of `GenerateRequest.prefix`: text that starts the contexts
        (the few-shot shots), whose key/value cache a backend may compute once; results
        are the same with or without it (a context whose tokens do not start with the
        prefix's, or that must be cut, is scored whole).
        """

    # ---------------------------------------------------------------- helpers
    def candidate_ids(self, candidates: Sequence[int | str]) -> list[int]:
        """Candidates as token ids (strings must be single tokens)."""
        out = []
        for c in candidates:
            if isinstance(c, str):
                ids = self.encode(c)
                if len(ids) != 1:
                    raise TokenizationError(
                        f"candidate {c!r} encodes to {len(ids)} tokens {ids} with {self.name}'s "
                        "tokenizer, not 1; pass a token id (e.g. its first, lm.encode(s)[0])")
                out.append(ids[0])
            else:
                out.append(int(c))
        return out


# -------------------------------------------------------------------- registry
_BACKENDS: dict[str, str | Callable[..., LM]] = {
    "hf": "freqgap.inference.hf:HFCausalLM.load",
    "fake": "freqgap.inference.fake:FakeLM",
}


def register_backend(name: str, factory: Callable[..., LM] | str) -> None:
    """Add a backend: `factory(name_or_path, **kw) -> LM`, or "module:attr.path"."""
    _BACKENDS[name] = factory


def backends() -> list[str]:
    """The names `get_lm` accepts as `backend`."""
    return sorted(_BACKENDS)


def _factory(backend: str) -> Callable[..., LM]:
    target = _BACKENDS.get(backend)
    if target is None:
        raise ModelError(f"unknown model backend {backend!r}; known backends: "
                         f"{', '.join(backends())}")
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def get_lm(name: str, backend: str = "hf", **kwargs: Any) -> LM:
    """The LM for an alias (conf/models.yaml), Hugging Face id or local directory.

    kwargs go to the backend: for "hf" `revision`, `device`, `dtype`, `batch_size`,
    `reuse_prefix`, `verbose` (freqgap.inference.hf.HFCausalLM.load). An unknown backend or alias is
    a `ModelError` listing the known names.
    """
    return _factory(backend)(name, **kwargs)
