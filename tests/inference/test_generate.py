"""Batched = unbatched and prefix reuse = no reuse, for GPT-Neo, GPT-J and GPT-NeoX."""

from __future__ import annotations

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import torch

from freqgap.inference.batching import encode_left_padded, left_pad
from freqgap.inference.generate import Generator, GroupStats
from tests.tiny_models import ARCHS


def _group(instances_dir, task="mult", k=8, seed=1, n=20):
    t = pq.read_table(instances_dir / "prompts.parquet")
    t = t.filter(pc.and_(pc.and_(pc.equal(t["task"], task), pc.equal(t["k"], k)),
                         pc.equal(t["seed"], seed)))
    rows = t.slice(0, n).to_pylist()
    assert len(rows) == n
    return rows[0]["prefix"], [r["prompt"] for r in rows]


def test_left_pad_positions_count_real_tokens_only():
    enc = left_pad([[5, 6, 7], [8]], pad_id=0, position_offset=10)
    assert enc["input_ids"].tolist() == [[5, 6, 7], [0, 0, 8]]
    assert enc["attention_mask"].tolist() == [[1, 1, 1], [0, 0, 1]]
    assert enc["position_ids"].tolist() == [[10, 11, 12], [10, 10, 10]]
    with pytest.raises(ValueError):
        left_pad([], pad_id=0)


@pytest.mark.parametrize("arch", ARCHS)
def test_batched_equals_unbatched(arch, loaded_models, instances_dir):
    model, tok, _ = loaded_models[arch]
    # Prompts of different lengths (k = 0, 2, 8, two tasks) so batches really are padded.
    prompts = (_group(instances_dir, "mult", 8, 1, 4)[1] + _group(instances_dir, "min_sec", 2, 0, 4)[1]
               + _group(instances_dir, "mult", 0, 0, 4)[1] + _group(instances_dir, "mult", 2, 1, 4)[1])
    lengths = {len(s) for s in tok(prompts)["input_ids"]}
    assert len(lengths) >= 3
    batched = Generator(model, tok, batch_size=12).generate_group("", prompts, reuse=False)
    single = Generator(model, tok, batch_size=1, preallocate=False)   # transformers' own cache
    one_by_one = [single.generate_group("", [p], reuse=False)[0] for p in prompts]
    assert batched == one_by_one
    assert len(set(batched)) > 1          # a model answering everything alike proves little


@pytest.mark.parametrize("arch", ARCHS)
def test_prefix_reuse_equals_no_reuse(arch, loaded_models, instances_dir):
    model, tok, _ = loaded_models[arch]
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 20)
    stats = GroupStats()
    reuse = Generator(model, tok, batch_size=5).generate_group(prefix, prompts, reuse=True,
                                                               stats=stats)
    plain = Generator(model, tok, batch_size=7, preallocate=False).generate_group(
        prefix, prompts, reuse=False)
    reuse_dynamic = Generator(model, tok, batch_size=6, preallocate=False).generate_group(
        prefix, prompts, reuse=True)
    assert stats.reused == len(prompts) and stats.fallback == 0
    assert reuse_dynamic == plain
    assert stats.prefix_tokens > 16        # longer than GPT-Neo's local window in the test
    assert reuse == plain
    assert len(set(reuse)) > 1


@pytest.mark.parametrize("arch", ARCHS)
def test_next_token_prefix_reuse_equals_full_prompts(arch, lms, instances_dir):
    """next_token_logprobs with the shots' cache = on the full prompts: log-probs allclose
    at float32 tolerance, the same top-50 in the same order; a prompt not starting with
    the prefix and one longer than the context are scored whole (and cut alike)."""
    lm = lms[arch].with_batch_size(6)
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 20)
    odd = "Q: something else entirely\nA:"
    long = prefix + "Q: What is 3 times 4?\nA: 12\n\n" * 120 + "Q: What is 2 times 2?\nA:"
    assert len(lm.encode(long)) > lm.max_length
    prompts = prompts + [odd, long]
    lengths = {len(s) for s in lm.encode_batch(prompts[:20])}
    assert len(lengths) > 1                  # right-padded suffix batches are exercised
    cands = [lm.encode(" 1")[0], lm.encode(" 2")[0], 0]
    plain = lm.next_token_logprobs(prompts, cands, top_k=50)
    lm.scoring_stats = GroupStats()
    reuse = lm.next_token_logprobs(prompts, cands, top_k=50, prefix=prefix)
    stats = lm.scoring_stats
    assert stats.reused == 20 and stats.fallback == 2
    assert stats.prefix_tokens > 16          # longer than GPT-Neo's local window in the test
    for a, b in zip(plain, reuse):
        assert torch.allclose(torch.tensor(a.candidates), torch.tensor(b.candidates),
                              rtol=1e-5, atol=1e-5)
        assert [t.id for t in a.top] == [t.id for t in b.top]
        assert torch.allclose(torch.tensor([t.logprob for t in a.top]),
                              torch.tensor([t.logprob for t in b.top]), rtol=1e-5, atol=1e-5)
        assert a.truncated == b.truncated
    assert reuse[-1].truncated > 0 and reuse[0].truncated == 0
    assert len({r.candidates for r in reuse[:20]}) > 1
    # Batched with the cache = each prompt alone with the cache.
    for p, b in zip(prompts[:3], reuse[:3]):
        alone = lm.next_token_logprobs([p], cands, top_k=50, prefix=prefix)[0]
        assert [t.id for t in alone.top] == [t.id for t in b.top]
        assert alone.candidates == pytest.approx(b.candidates, abs=1e-5)


def test_prefix_mismatch_falls_back_per_item(loaded_models, instances_dir):
    model, tok, _ = loaded_models["gptj"]
    prefix, prompts = _group(instances_dir, "mult", 2, 0, 6)
    odd = "Q: something else entirely\nA:"
    prompts = prompts + [odd]
    stats = GroupStats()
    gen = Generator(model, tok, batch_size=4)
    out = gen.generate_group(prefix, prompts, reuse=True, stats=stats)
    assert stats.fallback == 1 and stats.reused == 6
    assert out == gen.generate_group(prefix, prompts, reuse=False)


def test_shared_prefix_backs_off_past_merged_whitespace(loaded_models, instances_dir):
    model, tok, _ = loaded_models["gpt_neox"]
    prefix, prompts = _group(instances_dir, "mult", 2, 0, 3)
    gen = Generator(model, tok)
    full = gen.tokenize(prompts)
    shared = gen.shared_prefix(prefix, full)
    prefix_ids = gen.tokenize([prefix])[0]
    # Byte-level BPE tokenizes a trailing "\n\n" differently from "\n\nQ": the cached prefix
    # must be shorter than the prefix's own tokens, and start every full prompt.
    assert prefix_ids[:len(shared)] == shared and len(shared) < len(prefix_ids)
    assert all(f[:len(shared)] == shared for f in full)


def test_generation_stops_at_stop_tokens_and_max_new(loaded_models, instances_dir):
    model, tok, _ = loaded_models["gpt_neo"]
    _, prompts = _group(instances_dir, "mult", 2, 0, 8)
    gen = Generator(model, tok, max_new_tokens=3, batch_size=4)
    seqs = gen.tokenize(prompts)
    free = gen.generate_ids(seqs)
    assert all(len(t) <= 3 for t in free)
    # Make the second token every row produced a stop token: generation must end there.
    stop = gen.stop.clone()
    for row in free:
        if len(row) >= 2:
            stop[row[1]] = True
    gen.stop = stop
    cut = gen.generate_ids(seqs)
    for a, b in zip(free, cut):
        first = next((i for i, t in enumerate(a) if stop[t]), None)
        assert b == (a if first is None else a[:first + 1])


def test_encode_left_padded_matches_tokenizer(tiny_tokenizer):
    enc = encode_left_padded(tiny_tokenizer, ["Q: What is 3 times 4?\nA:", "12"])
    ids = tiny_tokenizer(["Q: What is 3 times 4?\nA:", "12"], add_special_tokens=False)["input_ids"]
    width = max(map(len, ids))
    assert enc["input_ids"].shape == (2, width)
    assert enc["input_ids"][1, width - len(ids[1]):].tolist() == ids[1]
    assert int(enc["attention_mask"][1].sum()) == len(ids[1])
    assert torch.equal(enc["position_ids"][0], torch.arange(width))


def test_out_of_memory_halves_the_batch(loaded_models, instances_dir):
    model, tok, _ = loaded_models["gpt_neox"]
    prefix, prompts = _group(instances_dir, "mult", 2, 0, 12)
    expected = Generator(model, tok, batch_size=12).generate_group(prefix, prompts, reuse=False)
    gen = Generator(model, tok, batch_size=16)
    seen = []
    gen.on_batch_size_change = seen.append
    real = gen._greedy

    def flaky(input_ids, *args):
        if input_ids.shape[0] > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(input_ids, *args)

    gen._greedy = flaky
    assert gen.generate_group(prefix, prompts, reuse=False) == expected
    assert seen == [8, 4, 2] and gen.batch_size == 2
    gen.batch_size = 1
    gen._greedy = lambda *a: (_ for _ in ()).throw(torch.cuda.OutOfMemoryError("out of memory"))
    with pytest.raises(torch.cuda.OutOfMemoryError):
        gen.generate_group(prefix, prompts[:1], reuse=False)
