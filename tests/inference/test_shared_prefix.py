"""Shared-prefix attention: the shots' K/V once per group, exact merge with each row's suffix.

On the CPU in float32 the predictions equal the unbatched, unpadded reference (each full
prompt alone, transformers' own cache) on GPT-Neo (local window crossing into the
prefix), GPT-J, GPT-NeoX, a Llama-style model (grouped-query attention) and the committed
demo checkpoint; the cache holds the prefix once, so its size grows with batch x suffix,
not with batch x prefix.
"""

from __future__ import annotations

import json

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import torch

import freqgap.inference.shared_prefix as sp
from freqgap.inference.generate import Generator, GroupStats
from freqgap.inference.kvcache import batch_cache, prefix_cache
from freqgap.inference.lm import get_lm
from freqgap.inference.prefix_attention import merged_attention
from freqgap.paths import REPO_ROOT
from tests.tiny_models import ARCHS, LLAMA, build_tiny_model

ALL = ARCHS + (LLAMA,)


def _group(instances_dir, task="mult", k=8, seed=1, n=20):
    t = pq.read_table(instances_dir / "prompts.parquet")
    t = t.filter(pc.and_(pc.and_(pc.equal(t["task"], task), pc.equal(t["k"], k)),
                         pc.equal(t["seed"], seed)))
    rows = t.slice(0, n).to_pylist()
    return rows[0]["prefix"], [r["prompt"] for r in rows]


@pytest.fixture(scope="module")
def models(loaded_models, tiny_model_dirs, tiny_tokenizer):
    """arch -> (model, tokenizer), the Llama-style one built beside the fixtures' three."""
    out = {arch: loaded_models[arch][:2] for arch in ARCHS}
    llama_dir = build_tiny_model(LLAMA, tiny_model_dirs["gptj"].parent / LLAMA, seed=1,
                                 tokenizer=tiny_tokenizer)
    lm = get_lm(str(llama_dir), device="cpu")
    out[LLAMA] = (lm.model, lm.tokenizer)
    return out


@pytest.fixture
def merges(monkeypatch):
    """Counts the calls of the merged attention (the shared path really ran)."""
    calls = []

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return merged_attention(*args, **kwargs)

    monkeypatch.setattr(sp, "merged_attention", spy)
    return calls


def _reference(model, tok, prompts, max_new=5):
    """Each full prompt alone: no batch, no padding, no reuse, transformers' own cache."""
    one = Generator(model, tok, max_new_tokens=max_new, batch_size=1, preallocate=False)
    return [one.generate_group("", [p], reuse=False)[0] for p in prompts]


@pytest.mark.parametrize("window", [None, 5])
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_merge_equals_softmax_over_the_concatenation(window, kv_heads):
    torch.manual_seed(0)
    batch, heads, q, dim, n_prefix, n_suffix = 3, 4, 4, 8, 9, 6
    query = torch.randn(batch, heads, q, dim)
    pk, pv = torch.randn(1, kv_heads, n_prefix, dim), torch.randn(1, kv_heads, n_prefix, dim)
    sk, sv = torch.randn(batch, kv_heads, n_suffix, dim), torch.randn(batch, kv_heads, n_suffix, dim)
    got = merged_attention(query, sk, sv, pk, pv, 0.3, window)
    rep = heads // kv_heads
    keys = torch.cat([pk.expand(batch, -1, -1, -1), sk], 2).repeat_interleave(rep, 1)
    values = torch.cat([pv.expand(batch, -1, -1, -1), sv], 2).repeat_interleave(rep, 1)
    q_pos = torch.arange(n_prefix + n_suffix - q, n_prefix + n_suffix)[:, None]
    k_pos = torch.arange(n_prefix + n_suffix)[None, :]
    ok = (k_pos <= q_pos) & ((q_pos - k_pos < window) if window else True)
    scores = (query @ keys.transpose(-1, -2) * 0.3).masked_fill(~ok, float("-inf"))
    want = torch.softmax(scores, -1) @ values
    assert torch.allclose(got, want, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("arch", ALL)
def test_predictions_equal_the_unbatched_unpadded_reference(arch, models, instances_dir,
                                                            merges):
    model, tok = models[arch]
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 20)
    implementation = model.config._attn_implementation
    stats = GroupStats()
    gen = Generator(model, tok, batch_size=5)
    assert gen.shared_attention
    shared = gen.generate_group(prefix, prompts, reuse=True, stats=stats)
    assert merges and stats.reused == len(prompts) and stats.prefix_tokens > 16
    assert shared == _reference(model, tok, prompts)
    assert len(set(shared)) > 1
    # The model is left as it was: its attention implementation, no patched _attn.
    assert model.config._attn_implementation == implementation
    assert not any("_attn" in vars(m) for m in model.modules())


@pytest.mark.parametrize("arch", [LLAMA, "gpt_neo"])
def test_next_token_scores_with_the_shared_prefix_equal_full_prompts(arch, models,
                                                                     instances_dir, merges):
    from freqgap.inference.logprobs import next_token_scores

    model, tok = models[arch]
    prefix, prompts = _group(instances_dir, "mult", 8, 0, 9)
    ids = [5, 17, 40]
    plain = next_token_scores(model, tok, prompts, ids, top_k=20, batch_size=4)
    assert not merges
    shared = next_token_scores(model, tok, prompts, ids, top_k=20, batch_size=4, prefix=prefix)
    assert merges
    for a, b in zip(plain, shared):
        assert [t for t, _ in a[1]] == [t for t, _ in b[1]]
        assert a[0] == pytest.approx(b[0], abs=1e-5)


def test_kv_memory_holds_the_prefix_once(models, instances_dir):
    """The cache of a batch is prefix + batch x suffix: doubling the batch adds suffix
    buffers only, while the per-row copies grow by batch x prefix."""
    model, tok = models["gptj"]
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 2)
    ids = Generator(model, tok).shared_prefix(prefix, tok(prompts)["input_ids"])
    cache = prefix_cache(model, ids)
    layers = len(cache.layers)
    heads, dim = cache.layers[0].keys.shape[1], cache.layers[0].keys.shape[-1]
    per_token = 2 * heads * dim * 4                       # keys + values, float32
    suffix = 12
    for batch in (4, 8, 64):
        shared = sp.shared_prefix_cache(cache, batch, suffix)
        with sp.attached(model, shared), torch.inference_mode():
            model(input_ids=torch.ones((batch, 3), dtype=torch.long),
                  position_ids=torch.arange(len(ids), len(ids) + 3)[None],
                  past_key_values=shared, use_cache=True, logits_to_keep=1)
        assert sp.kv_bytes(shared) == layers * per_token * (len(ids) + batch * suffix)
        for layer, own in zip(shared.layers, cache.layers):
            assert layer.prefix_keys.data_ptr() == own.keys.data_ptr()      # not copied
            assert layer.keys.shape == (batch, heads, 3, dim)
        copied = batch_cache(cache, batch, len(ids) + suffix)
        assert sp.kv_bytes(copied) == layers * per_token * batch * (len(ids) + suffix)


def test_logits_only_for_the_positions_read(models, instances_dir):
    model, tok = models["gpt_neox"]
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 6)
    rows = []
    hook = model.get_output_embeddings().register_forward_hook(
        lambda mod, args, out: rows.append(tuple(args[0].shape[:2])))
    try:
        Generator(model, tok, max_new_tokens=3, batch_size=6).generate_group(prefix, prompts)
    finally:
        hook.remove()
    assert rows and all(seq == 1 for _, seq in rows)       # one position per row and step


def test_an_architecture_without_it_keeps_the_copies_and_says_so_once(tiny_tokenizer,
                                                                      instances_dir, capsys):
    from transformers import AutoModelForCausalLM, GPT2Config

    cfg = GPT2Config(vocab_size=len(tiny_tokenizer), n_embd=32, n_layer=2, n_head=4,
                     initializer_range=0.2, eos_token_id=tiny_tokenizer.eos_token_id,
                     bos_token_id=tiny_tokenizer.eos_token_id)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    sp._TOLD.clear()
    prefix, prompts = _group(instances_dir, "mult", 2, 0, 4)
    first = Generator(model, tiny_tokenizer, batch_size=4)
    second = Generator(model, tiny_tokenizer, batch_size=2)
    assert not first.shared_attention
    out = first.generate_group(prefix, prompts)
    assert second.generate_group(prefix, prompts) == out == _reference(model, tiny_tokenizer,
                                                                       prompts)
    err = capsys.readouterr().err
    assert err.count("shared-prefix attention does not cover") == 1 and "gpt2" in err


def test_the_demo_checkpoint_matches_its_reference(merges):
    """The project's trained model: the shared path answers as each prompt alone does."""
    demo = REPO_ROOT / "models" / "demo"
    lm = get_lm(str(demo), device="cpu", dtype="float32")
    items = json.loads((demo / "predictions.json").read_text())["items"][:12]
    prompts = [it["prompt"] for it in items]
    prefix = prompts[0][: prompts[0].rfind("Q: ")]
    same = [p for p in prompts if p.startswith(prefix)]
    assert len(same) >= 4
    got = Generator(lm.model, lm.tokenizer, batch_size=4).generate_group(prefix, same)
    assert merges and got == _reference(lm.model, lm.tokenizer, same)


def test_batch_from_free_memory_counts_the_prefix_once(models, instances_dir, monkeypatch):
    """On a GPU the batch is what free memory holds (here a pretended 6 MB), capped by the
    batch size; the shared path, paying the prefix once, fits more rows than the copies."""
    import freqgap.inference.generate as generate

    model, tok = models["gpt_neox"]
    prefix, prompts = _group(instances_dir, "mult", 8, 1, 20)
    expected = _reference(model, tok, prompts[:1]) + _reference(model, tok, prompts[1:2])
    monkeypatch.setattr(generate, "free_bytes", lambda device: 6_000_000)
    sizes = {}
    for shared in (True, False):
        gen = Generator(model, tok, batch_size=64, shared_attention=shared)
        real, seen = gen._greedy, []

        def spy(input_ids, *args, _real=real, _seen=seen):
            _seen.append(input_ids.shape[0])
            return _real(input_ids, *args)

        gen._greedy = spy
        out = gen.generate_group(prefix, prompts)
        assert out[:2] == expected
        sizes[shared] = max(seen)
    assert 1 < sizes[False] < sizes[True] <= 20


def test_rows_that_stopped_leave_the_batch(monkeypatch):
    """The demo checkpoint answers and stops at the newline: the stopped rows leave the
    batch (their suffixes dropped, the prefix kept) and the answers are unchanged."""
    demo = REPO_ROOT / "models" / "demo"
    lm = get_lm(str(demo), device="cpu", dtype="float32")
    prompts = [it["prompt"] for it in json.loads((demo / "predictions.json").read_text())["items"]]
    prefix = prompts[0][: prompts[0].rfind("Q: ")]
    same = [p for p in prompts if p.startswith(prefix)][:16]
    kept, real = [], sp.SharedPrefixLayer.keep_rows

    def spy(self, rows):
        kept.append(len(rows))
        real(self, rows)

    monkeypatch.setattr(sp.SharedPrefixLayer, "keep_rows", spy)
    gen = Generator(lm.model, lm.tokenizer, max_new_tokens=6, batch_size=16)
    got = gen.generate_group(prefix, same)
    assert kept                                   # some rows stopped before the others
    assert got == _reference(lm.model, lm.tokenizer, same, max_new=6)
    assert all(g.endswith("\n") for g in got if len(lm.encode(g)) < 6)


def test_float32_scores_fall_back_where_the_device_refuses(monkeypatch):
    """Where bmm cannot write float32 from 16-bit operands (here: the CPU, pretended
    able by the probe), the scores are made in the model's dtype, and that is kept."""
    import freqgap.inference.prefix_attention as pa

    monkeypatch.setattr(pa, "_float32_products", lambda device, dtype: True)
    monkeypatch.setattr(pa, "_NO_FLOAT32_PRODUCTS", set())
    a, b = torch.randn(2, 3, 8).bfloat16(), torch.randn(2, 8, 5).bfloat16()
    got = pa._scores(a, b, 0.5)
    assert got.dtype == torch.bfloat16 and torch.equal(got, torch.bmm(a, b) * 0.5)
    assert ("cpu", torch.bfloat16) in pa._NO_FLOAT32_PRODUCTS
