"""Log-probabilities of given continuations and of next tokens, batched.

Scoring-based evaluations (two-choice letters, True/False, a critical word's surprisal) need
p(continuation | context) rather than generated text. Inputs go through the same
left-padding helper as generation (`batching.left_pad`: explicit attention mask and
position ids counting real tokens only), so a row scores the same in a batch as alone.

Tokenisation: context and continuation are encoded separately and concatenated, so the
continuation's subword tokens are those of the continuation text itself (write the
leading space into the continuation: " crops"). An empty context is replaced by the
tokenizer's BOS (else EOS) token so that the first continuation token has a condition.
Log-probabilities are natural logs, computed in float32 from the logits. Next-token
scoring can continue prompts from a shared prefix's key/value cache (the few-shot shots,
computed once; freqgap.inference.kvcache), with the same results as the full prompts.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import torch

from freqgap.inference.batching import left_pad
from freqgap.inference.kvcache import (batch_cache, prefix_cache, shared_prefix_ids, starts_with,
                                       supports_preallocation)
from freqgap.inference.lm import ContinuationScore
from freqgap.inference.shared_prefix import (attached, shared_attention,
                                             shared_prefix_cache)
from freqgap.progress import Progress

__all__ = ["ContinuationScore", "continuation_logprobs", "next_token_logprobs",
           "next_token_scores", "first_token_id"]


def _pad_id(tokenizer) -> int:
    pad = tokenizer.pad_token_id
    return pad if pad is not None else tokenizer.eos_token_id


def _start_id(tokenizer) -> int:
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if start is None:
        raise ValueError("the tokenizer has neither a BOS nor an EOS token to stand for an "
                         "empty context")
    return start


def _encode(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    if not texts:
        return []
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def _model_device(model) -> torch.device:
    return next(model.parameters()).device


def _max_len(model) -> int | None:
    for attr in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(model.config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


@torch.inference_mode()
def continuation_logprobs(model, tokenizer, contexts: Sequence[str], continuations: Sequence[str],
                          batch_size: int = 16, label: str = "logprobs") -> list[ContinuationScore]:
    """Score each continuation given its context; results in input order."""
    if len(contexts) != len(continuations):
        raise ValueError(f"{len(contexts)} contexts for {len(continuations)} continuations")
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    ctx_ids = _encode(tokenizer, contexts)
    cont_ids = _encode(tokenizer, continuations)
    limit = _max_len(model)
    rows: list[tuple[list[int], list[int], int]] = []
    for i, (c, k) in enumerate(zip(ctx_ids, cont_ids)):
        if not k:
            raise ValueError(f"continuation {i} ({continuations[i]!r}) encodes to no tokens")
        c = c or [_start_id(tokenizer)]
        full = c + k
        dropped = 0
        if limit is not None and len(full) - 1 > limit:
            dropped = len(full) - 1 - limit
            if dropped >= len(c):
                raise ValueError(f"continuation {i} alone is longer than the model's "
                                 f"{limit}-token context")
            full = full[dropped:]
        rows.append((full[:-1], k, dropped))
    order = sorted(range(len(rows)), key=lambda j: -len(rows[j][0]))
    out: list[ContinuationScore | None] = [None] * len(rows)
    device = _model_device(model)
    progress = Progress(label, len(rows), unit="sequences")
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        batch = left_pad([rows[j][0] for j in idx], _pad_id(tokenizer), device=device)
        keep = max(len(rows[j][1]) for j in idx)
        logits = model(**batch, logits_to_keep=keep).logits[:, -keep:, :]
        logp = torch.log_softmax(logits, dim=-1, dtype=torch.float32)
        for b, j in enumerate(idx):
            targets = rows[j][1]
            n = len(targets)
            target_t = torch.as_tensor(targets, device=device)
            picked = logp[b, keep - n:, :].gather(-1, target_t.unsqueeze(-1)).squeeze(-1)
            greedy = bool((logp[b, keep - n:, :].argmax(-1) == target_t).all())
            out[j] = ContinuationScore(tuple(targets), tuple(picked.tolist()), rows[j][2],
                                       greedy)
        progress.update(advance=len(idx))
    return out  # type: ignore[return-value]


def _last_logprobs(model, tokenizer, prompts: Sequence[str], batch_size: int, label: str,
                   prefix: str = "", stats=None
                   ) -> Iterator[tuple[list[int], torch.Tensor, list[int]]]:
    """Per batch: prompt indices, log p of the next token (B, V) in float32, and the
    number of context tokens cut on the left of each to fit the model.

    With a `prefix` (text shared by the prompts), the prompts whose tokens start with the
    prefix's tokens (kvcache.shared_prefix_ids) and fit the model are continued from the
    prefix's key/value cache, computed once; the others run whole. `stats`
    (generate.GroupStats) counts both."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    ids = [p or [_start_id(tokenizer)] for p in _encode(tokenizer, prompts)]
    limit = _max_len(model)
    fits = [j for j, p in enumerate(ids) if limit is None or len(p) <= limit]
    shared = (shared_prefix_ids(_encode(tokenizer, [prefix])[0], [ids[j] for j in fits])
              if prefix else [])
    hit = [j for j in fits if starts_with(ids[j], shared)]
    hit_set = set(hit)
    miss = [j for j in range(len(ids)) if j not in hit_set]
    if stats is not None:
        stats.reused += len(hit)
        stats.fallback += len(miss)
        stats.prefix_tokens = len(shared)
    progress = Progress(label, len(ids), unit="prompts")
    if hit:
        for idx, logp in _continue_prefix(model, tokenizer, shared, ids, hit, batch_size):
            yield idx, logp, [0] * len(idx)
            progress.update(advance=len(idx))
    cut = [max(0, len(p) - limit) if limit is not None else 0 for p in ids]
    if limit is not None:
        ids = [p[-limit:] for p in ids]
    order = sorted(miss, key=lambda j: -len(ids[j]))
    device = _model_device(model)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        batch = left_pad([ids[j] for j in idx], _pad_id(tokenizer), device=device)
        with torch.inference_mode():
            logits = model(**batch, logits_to_keep=1).logits[:, -1, :]
            logp = torch.log_softmax(logits, dim=-1, dtype=torch.float32)
        yield idx, logp, [cut[j] for j in idx]
        progress.update(advance=len(idx))


def _continue_prefix(model, tokenizer, prefix: list[int], ids: list[list[int]], rows: list[int],
                     batch_size: int) -> Iterator[tuple[list[int], torch.Tensor]]:
    """Next-token log p of `rows` (whose ids start with `prefix`) from the prefix's cache.

    Suffixes are padded on the right: the prefix and each suffix stay contiguous, so
    positions and local-attention windows are those of the full prompt, a suffix token
    never attends to the later padding (causal mask), and each row's logits are taken at
    its own last real token (`logits_to_keep` as per-row positions)."""
    n = len(prefix)
    cache = prefix_cache(model, prefix)
    device = _model_device(model)
    shared = shared_attention(model) and supports_preallocation(cache)
    order = sorted(rows, key=lambda j: -len(ids[j]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        suffixes = [ids[j][n:] for j in idx]
        width = len(suffixes[0])
        input_ids = torch.full((len(idx), width), _pad_id(tokenizer), dtype=torch.long)
        mask = torch.zeros((len(idx), n + width), dtype=torch.long)
        mask[:, :n] = 1
        for b, s in enumerate(suffixes):
            input_ids[b, :len(s)] = torch.as_tensor(s, dtype=torch.long)
            mask[b, n:n + len(s)] = 1
        last = torch.as_tensor([[len(s) - 1] for s in suffixes], dtype=torch.long)
        positions = torch.arange(n, n + width, dtype=torch.long, device=device)[None]
        with torch.inference_mode():
            if shared:
                past = shared_prefix_cache(cache, len(idx), width)
                with attached(model, past):
                    out = model(input_ids=input_ids.to(device), position_ids=positions,
                                past_key_values=past, use_cache=True,
                                logits_to_keep=last.to(device))
            else:
                out = model(input_ids=input_ids.to(device), attention_mask=mask.to(device),
                            position_ids=positions.expand(len(idx), -1),
                            past_key_values=batch_cache(cache, len(idx), n + width),
                            use_cache=True, logits_to_keep=last.to(device))
            logp = torch.log_softmax(out.logits[:, -1, :], dim=-1, dtype=torch.float32)
        yield idx, logp


def next_token_logprobs(model, tokenizer, prompts: Sequence[str],
                        token_ids: Sequence[int] | None = None, batch_size: int = 16,
                        label: str = "next-token") -> torch.Tensor:
    """log p(next token | prompt): (N, V) over the vocabulary, or (N, len(token_ids))."""
    width = len(token_ids) if token_ids is not None else None
    result: torch.Tensor | None = None
    select = None
    for idx, logp, _ in _last_logprobs(model, tokenizer, prompts, batch_size, label):
        if token_ids is not None:
            if select is None:
                select = torch.as_tensor(list(token_ids), device=logp.device)
            logp = logp.index_select(-1, select)
        if result is None:
            result = torch.empty((len(prompts), width or logp.shape[-1]), dtype=torch.float32)
        result[torch.as_tensor(idx)] = logp.cpu()
    if result is None:
        return torch.empty((0, width or 0), dtype=torch.float32)
    return result


def next_token_scores(model, tokenizer, prompts: Sequence[str], token_ids: Sequence[int],
                      top_k: int | None, batch_size: int = 16, label: str = "next-token",
                      prefix: str = "", stats=None
                      ) -> list[tuple[list[float], list[tuple[int, float]], int]]:
    """Per prompt: log p of each of `token_ids`, the top_k (id, log p) most likely next
    tokens (ties by lower id), and the context tokens cut on the left. `prefix`: text
    shared by the prompts whose key/value cache is computed once (see _last_logprobs)."""
    if top_k is not None and top_k < 1:
        raise ValueError("top_k must be at least 1")
    out: list = [None] * len(prompts)
    select = None
    for idx, logp, cut in _last_logprobs(model, tokenizer, prompts, batch_size, label,
                                         prefix, stats):
        if select is None:
            select = torch.as_tensor(list(token_ids), dtype=torch.long, device=logp.device)
        picked = logp.index_select(-1, select).cpu().tolist() if len(token_ids) else \
            [[] for _ in idx]
        tops: list[list[tuple[int, float]]] = [[] for _ in idx]
        if top_k:
            # One more than asked, then sort by (-logp, id), so that ties order stably.
            k = min(top_k + 1, logp.shape[-1])
            values, indices = logp.topk(k, dim=-1)
            for b, (vals, ids) in enumerate(zip(values.cpu().tolist(), indices.cpu().tolist())):
                tops[b] = sorted(zip(ids, vals), key=lambda t: (-t[1], t[0]))[:top_k]
        for b, j in enumerate(idx):
            out[j] = (picked[b], tops[b], cut[b])
    return out


def first_token_id(tokenizer, text: str) -> int:
    """The first subword id of `text` encoded alone (no special tokens)."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:
        raise ValueError(f"{text!r} encodes to no tokens")
    return int(ids[0])
