"""Batched greedy decoding with a shared-prefix key/value cache.

Every test item of one (task, k, seed) starts with the same k shots. The shots are run
through the model once; their key/value cache is copied into each batch, and only the
test question and the few generated tokens are computed per item. The suffix of each item
is taken from the tokenization of its *full* prompt, after checking that the cached
prefix tokens are a prefix of it, so the tokens the model sees (and the predictions) are
exactly those of the full prompt. Suffixes of equal length are batched together, so the
reuse path needs no padding at all; the no-reuse path left-pads with explicit position
ids (freqgap.inference.batching).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from freqgap.inference.batching import left_pad
from freqgap.inference.kvcache import (batch_cache, prefix_cache, preallocated_cache,
                                       shared_prefix_ids, starts_with, supports_preallocation)
from freqgap.inference.lm import NEWLINE, StopRule
from freqgap.inference.memory import free_bytes, row_bytes, rows_that_fit
from freqgap.inference.shared_prefix import attached, shared_prefix_cache
from freqgap.inference.shared_prefix import shared_attention as model_takes_shared


@dataclass
class GroupStats:
    """How a group of prompts was served (for the manifest and the benchmark)."""

    reused: int = 0
    fallback: int = 0
    prefix_tokens: int = 0


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class Generator:
    """Greedy decoding of at most `max_new_tokens` tokens, ended by a `StopRule` (default:
    the first token holding a newline, or eos)."""

    def __init__(self, model, tokenizer, max_new_tokens: int = 5, batch_size: int = 32,
                 on_batch_size_change: Callable[[int], None] | None = None,
                 preallocate: bool = True, stop: StopRule = NEWLINE,
                 shared_attention: bool = True) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.on_batch_size_change = on_batch_size_change
        self.preallocate = preallocate
        self.stop_rule = stop
        # The shots' K/V once per group (freqgap.inference.shared_prefix) where the
        # architecture takes it; else per-row copies (kvcache.batch_cache).
        self.shared_attention = shared_attention and model_takes_shared(model)
        self.n_layers = model.config.get_text_config().num_hidden_layers
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.stop = self._stop_mask()

    def _stop_mask(self) -> torch.Tensor:
        """Token ids that end generation under `self.stop_rule`."""
        vocab = self.model.get_output_embeddings().weight.shape[0]
        n = min(len(self.tokenizer), vocab)
        texts = self.tokenizer.batch_decode([[i] for i in range(n)])
        mask = torch.zeros(vocab, dtype=torch.bool)
        needles = self.stop_rule.token_contains
        mask[[i for i, t in enumerate(texts) if any(s in t for s in needles)]] = True
        if self.stop_rule.eos and self.tokenizer.eos_token_id is not None:
            mask[self.tokenizer.eos_token_id] = True
        return mask.to(self.device)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids without special tokens (the prompts carry no header or bos)."""
        return self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]

    @torch.inference_mode()
    def _greedy(self, input_ids, attention_mask, position_ids, past, compact: bool = False
                ) -> list[list[int]]:
        """Greedy tokens of each row, cut after its first stop token. With `compact` (a
        shared-prefix cache, whose rows hold only their own tokens), a row that stopped
        leaves the batch: later steps compute the live rows only."""
        batch = input_ids.shape[0]
        live = torch.arange(batch, device=self.device)       # original row of each live row
        tokens = torch.full((batch, self.max_new_tokens), self.pad_id, dtype=torch.long,
                            device=self.device)
        done = torch.zeros(batch, dtype=torch.bool, device=self.device)
        steps = 0
        for step in range(self.max_new_tokens):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             position_ids=position_ids, past_key_values=past, use_cache=True,
                             logits_to_keep=1)
            nxt = out.logits[:, -1, :].argmax(-1)
            tokens[live, step] = nxt
            steps = step + 1
            stopped = self.stop[nxt]
            done[live] |= stopped
            if step == self.max_new_tokens - 1 or bool(done.all()):
                break
            past = out.past_key_values
            if compact and bool(stopped.any()):
                keep = (~stopped).nonzero().squeeze(1)
                for layer in past.layers:
                    layer.keep_rows(keep)
                live, nxt = live[keep], nxt[keep]
            input_ids = nxt[:, None]
            if attention_mask is not None:
                attention_mask = torch.cat(
                    [attention_mask, attention_mask.new_ones((batch, 1))], dim=1)
            position_ids = position_ids[:, -1:] + 1
        stop = self.stop.tolist()
        out_rows = []
        for row in tokens[:, :steps].tolist():
            cut = next((i + 1 for i, t in enumerate(row) if stop[t]), len(row))
            out_rows.append(row[:cut])
        return out_rows

    def _fit(self, tokens: int, attended: int) -> int:
        """Rows per batch for `tokens` input tokens a row attending `attended` keys: the
        configured size, or on a GPU fewer where free memory holds fewer (memory.py)."""
        free = free_bytes(self.device)
        if free is None:
            return self.batch_size
        per_row = row_bytes(self.model.config, self.dtype, tokens, self.max_new_tokens,
                            attended)
        return rows_that_fit(free, 0, per_row, self.batch_size)

    def _adaptive(self, items: list, run: Callable[[list], list], rows: int | None = None
                  ) -> list:
        """Run `run` over `items` in batches of `rows` (default: the batch size); on
        out-of-memory, halve the batch (and the batch size) and retry."""
        results: list = []
        size = rows or self.batch_size
        start = 0
        while start < len(items):
            chunk = items[start:start + size]
            try:
                results.extend(run(chunk))
            except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
                if not _is_oom(exc) or size == 1:
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                size = max(1, size // 2)
                self.batch_size = min(self.batch_size, size)
                if self.on_batch_size_change:
                    self.on_batch_size_change(self.batch_size)
                continue
            start += len(chunk)
        return results

    def generate_ids(self, seqs: Sequence[Sequence[int]]) -> list[list[int]]:
        """No reuse: left-padded full prompts, batched in order of length."""
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))

        def run(idx: list[int]) -> list[list[int]]:
            enc = left_pad([seqs[i] for i in idx], self.pad_id, device=self.device)
            past = None
            if self.preallocate:
                past = preallocated_cache(len(idx), enc["input_ids"].shape[1] + self.max_new_tokens,
                                          n_layers=self.n_layers)
            return self._greedy(enc["input_ids"], enc["attention_mask"], enc["position_ids"], past)

        longest = max((len(s) for s in seqs), default=1)
        out = self._adaptive(order, run, self._fit(longest, longest + self.max_new_tokens))
        result: list[list[int]] = [[] for _ in seqs]
        for i, toks in zip(order, out):
            result[i] = toks
        return result

    def prefix_cache(self, prefix_ids: Sequence[int]):
        """The key/value cache of the shared prefix, computed once."""
        return prefix_cache(self.model, prefix_ids)

    def generate_with_prefix(self, prefix_ids: Sequence[int],
                             seqs: Sequence[Sequence[int]]) -> list[list[int]]:
        """Continue each full prompt in `seqs` (all starting with `prefix_ids`) from its cache."""
        n_prefix = len(prefix_ids)
        cache = self.prefix_cache(prefix_ids)
        shared = self.shared_attention and supports_preallocation(cache)
        by_len: dict[int, list[int]] = defaultdict(list)
        for i, s in enumerate(seqs):
            by_len[len(s) - n_prefix].append(i)
        result: list[list[int]] = [[] for _ in seqs]
        for suffix_len in sorted(by_len):
            idx = by_len[suffix_len]

            def run(chunk: list[int]) -> list[list[int]]:
                batch = len(chunk)
                ids = torch.tensor([list(seqs[i][n_prefix:]) for i in chunk], dtype=torch.long,
                                   device=self.device)
                # Every row holds the same positions: one row of position ids serves all.
                pos = torch.arange(n_prefix, n_prefix + suffix_len, device=self.device)[None]
                if shared:
                    past = shared_prefix_cache(cache, batch, suffix_len + self.max_new_tokens)
                    with attached(self.model, past):
                        return self._greedy(ids, None, pos, past, True)
                past = batch_cache(cache, batch, n_prefix + suffix_len + self.max_new_tokens,
                                   self.preallocate)
                mask = torch.ones((batch, n_prefix + suffix_len), dtype=torch.long,
                                  device=self.device)
                return self._greedy(ids, mask, pos.expand(batch, -1), past)

            attended = n_prefix + suffix_len + self.max_new_tokens
            rows = self._fit(suffix_len if shared else attended - self.max_new_tokens, attended)
            for i, toks in zip(idx, self._adaptive(idx, run, rows)):
                result[i] = toks
        return result

    def shared_prefix(self, prefix_text: str, seqs: Sequence[Sequence[int]]) -> list[int]:
        """Prefix tokens to cache (kvcache.shared_prefix_ids: the prefix's tokens, backed off
        past BPE merges with the question, starting as many full prompts as possible)."""
        if not prefix_text or not seqs:
            return []
        return shared_prefix_ids(self.tokenize([prefix_text])[0], seqs)

    def generate_group(self, prefix_text: str, prompts: Sequence[str],
                       reuse: bool = True, stats: GroupStats | None = None) -> list[str]:
        """Continuations (decoded text) for prompts sharing `prefix_text`."""
        seqs = self.tokenize(prompts)
        prefix = self.shared_prefix(prefix_text, seqs) if reuse else []
        n = len(prefix)
        hit = [i for i, s in enumerate(seqs) if starts_with(s, prefix)]
        hit_set = set(hit)
        miss = [i for i in range(len(seqs)) if i not in hit_set]
        tokens: list[list[int]] = [[] for _ in seqs]
        if hit:
            for i, t in zip(hit, self.generate_with_prefix(prefix, [seqs[i] for i in hit])):
                tokens[i] = t
        if miss:
            for i, t in zip(miss, self.generate_ids([seqs[i] for i in miss])):
                tokens[i] = t
        if stats is not None:
            stats.reused += len(hit)
            stats.fallback += len(miss)
            stats.prefix_tokens = n
        return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
