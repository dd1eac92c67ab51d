"""FakeLM: a small deterministic LM behind the model interface, for tests.

Characters are tokens (printable ASCII, tab, newline; id 0 is eos). The next-token
distribution after a text is a softmax over pseudo-random logits seeded by sha256 of the
seed and the last `order` characters, so every request type sees one consistent model:
greedy generation takes the argmax of exactly the distribution that `loglikelihood` and
`next_token_logprobs` report. `answers` maps a context to the continuation the model
should favour (its characters get +20 on their logits, then eos), so a test can script
right and wrong answers. `delay_s` sleeps per generated request (to kill a run midway).
No torch: numpy only.
"""

from __future__ import annotations

import hashlib
import json
import string
import time
from typing import Mapping, Sequence

import numpy as np

from freqgap.inference.lm import (LM, ContinuationScore, GenerateRequest, LoglikelihoodRequest,
                                  NextTokenLogprobs, TokenizationError, TopToken)

EOS_TEXT = "<eos>"
CHARS = "\t\n" + "".join(c for c in string.printable if c not in "\t\n\r\x0b\x0c")
BOOST = 20.0


class FakeLM(LM):
    """Deterministic character-level LM; see the module docstring."""

    def __init__(self, name: str = "fake", *, seed: int = 0, order: int = 8,
                 answers: Mapping[str, str] | None = None, max_length: int = 4096,
                 revision: str = "none", delay_s: float = 0.0, **_ignored) -> None:
        self._name = name
        self.seed, self.order = seed, order
        self.answers = dict(answers or {})
        self._max_length = max_length
        self._revision = revision
        self.delay_s = delay_s
        self.vocab = [EOS_TEXT] + list(CHARS)
        self._ids = {c: i for i, c in enumerate(self.vocab) if i}
        self.requests_seen = 0
        self.prefix_hits = 0       # next-token contexts that started with the given prefix
        state = json.dumps({"seed": seed, "order": order, "answers": sorted(self.answers.items())})
        self._sha = hashlib.sha256(state.encode()).hexdigest()

    name = property(lambda self: self._name)
    model_id = property(lambda self: f"fake:{self._name}")
    revision = property(lambda self: self._revision)
    dtype = property(lambda self: "float64")
    device = property(lambda self: "cpu")
    max_length = property(lambda self: self._max_length)
    weights_sha256 = property(lambda self: self._sha)
    batch_invariant = property(lambda self: True)
    num_parameters = property(lambda self: 0)

    def encode(self, text: str) -> list[int]:
        try:
            return [self._ids[c] for c in text]
        except KeyError as exc:
            raise TokenizationError(f"FakeLM: character {exc.args[0]!r} is not in its "
                                    "vocabulary (printable ASCII, tab, newline)") from None

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.vocab[i] for i in ids if i)

    # ---------------------------------------------------------------- the model
    def logprobs(self, context: str, generated: str = "") -> np.ndarray:
        """log p(next token | context + generated) over the vocabulary (float64)."""
        text = (context + generated)[-self.order:]
        digest = hashlib.sha256(f"{self.seed}|{text}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        logits = rng.normal(0.0, 1.0, len(self.vocab))
        want = self.answers.get(context)
        if want is not None and want.startswith(generated):
            nxt = want[len(generated):]
            logits[self._ids[nxt[0]] if nxt else 0] += BOOST
        logits -= logits.max()
        return logits - np.log(np.exp(logits).sum())

    def _fit(self, context: str) -> tuple[str, int]:
        keep = self._max_length - 1
        return (context[-keep:], len(context) - keep) if len(context) > keep else (context, 0)

    # ---------------------------------------------------------------- requests
    def generate_until(self, requests: Sequence[GenerateRequest]) -> list[str]:
        out = []
        for r in requests:
            self.requests_seen += 1
            if self.delay_s:
                time.sleep(self.delay_s)
            if len(r.context) + r.max_new_tokens > self._max_length:
                raise ValueError(f"FakeLM: context of {len(r.context)} characters + "
                                 f"{r.max_new_tokens} new exceeds {self._max_length}")
            text = ""
            for _ in range(r.max_new_tokens):
                tok = int(np.argmax(self.logprobs(r.context, text)))
                if tok == 0:
                    if r.stop.eos:
                        break
                    continue       # eos without an eos rule: emitted, decodes to nothing
                piece = self.vocab[tok]
                text += piece
                if any(s in piece for s in r.stop.token_contains):
                    break
            out.append(text)
        return out

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[ContinuationScore]:
        out = []
        for r in requests:
            ids = self.encode(r.continuation)
            if not ids:
                raise ValueError(f"continuation {r.continuation!r} encodes to no tokens")
            if len(ids) >= self._max_length:
                raise ValueError("FakeLM: continuation alone is longer than the context")
            context, cut = self._fit(r.context)
            lps, greedy = [], True
            for j, t in enumerate(ids):
                lp = self.logprobs(context, r.continuation[:j])
                lps.append(float(lp[t]))
                greedy &= int(np.argmax(lp)) == t
            out.append(ContinuationScore(tuple(ids), tuple(lps), cut, greedy))
        return out

    def next_token_logprobs(self, contexts: Sequence[str], candidates: Sequence[int | str] = (),
                            top_k: int | None = None, prefix: str = "") -> list[NextTokenLogprobs]:
        """The prefix hint is checked and counted (`prefix_hits`): this model's distribution
        depends on the last `order` characters only, so there is nothing to cache."""
        ids = self.candidate_ids(candidates)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix is a string, not {type(prefix).__name__}")
        out = []
        for c in contexts:
            context, cut = self._fit(c)
            if prefix and not cut and len(c) > len(prefix) and c.startswith(prefix):
                self.prefix_hits += 1
            lp = self.logprobs(context)
            top = ()
            if top_k:
                order = sorted(range(len(lp)), key=lambda i: (-lp[i], i))[:top_k]
                top = tuple(TopToken(i, self.vocab[i], float(lp[i])) for i in order)
            out.append(NextTokenLogprobs(tuple(float(lp[i]) for i in ids), top, cut))
        return out
