"""The model interface: one contract for the transformers backend and the fake LM."""

from __future__ import annotations

import math

import pyarrow.parquet as pq
import pytest

from freqgap.errors import FreqgapError
from freqgap.inference.fake import FakeLM
from freqgap.inference.generate import Generator
from freqgap.inference.lm import (NEWLINE, PARAGRAPH, GenerateRequest, LoglikelihoodRequest,
                                  StopRule, TokenizationError, backends, get_lm)
from freqgap.inference.models import ModelError

PROMPTS = ["Q: What is 3 times 4?\nA:", "Q: What is 12 plus 7?\nA:", "The quick brown",
           "Q: What is 5 times 5?\nA: 25\n\nQ: What is 6 times 2?\nA:"]


@pytest.fixture(params=["fake", "gpt_neox", "gptj"])
def lm(request, lms):
    if request.param == "fake":
        return FakeLM(seed=3)
    return lms[request.param]


def test_generate_until_is_greedy_and_stops(lm):
    reqs = [GenerateRequest(p, max_new_tokens=6) for p in PROMPTS]
    out = lm.generate_until(reqs)
    assert out == [lm.generate_until([r])[0] for r in reqs]          # batched = alone
    for text in out:
        assert "\n" not in text[:-1]                                   # stops at the newline
    # Greedy: the first generated token is the argmax of the next-token distribution,
    # and loglikelihood calls it greedy (the runner-up is not).
    checked = 0
    for p, text in zip(PROMPTS, out):
        top = lm.next_token_logprobs([p], top_k=2)[0].top
        first, second = (lm.decode([t.id]) for t in top)
        assert text.startswith(first)
        if lm.encode(first) == [top[0].id] and lm.encode(second) == [top[1].id]:
            good, bad = lm.loglikelihood([LoglikelihoodRequest(p, first),
                                          LoglikelihoodRequest(p, second)])
            assert good.is_greedy and not bad.is_greedy
            assert good.total == pytest.approx(top[0].logprob, abs=1e-4)
            checked += 1
    assert checked >= 2


def test_loglikelihood_agrees_with_next_token_logprobs(lm):
    cont = " 12"
    ids = lm.encode(cont)
    score = lm.loglikelihood([LoglikelihoodRequest(PROMPTS[0], cont)])[0]
    assert score.token_ids == tuple(ids) and len(score.token_logprobs) == len(ids)
    nxt = lm.next_token_logprobs([PROMPTS[0]], candidates=[ids[0]], top_k=5)[0]
    assert math.isclose(nxt.candidates[0], score.token_logprobs[0], abs_tol=1e-4)
    assert score.total == pytest.approx(sum(score.token_logprobs))
    lps = [t.logprob for t in nxt.top]
    assert lps == sorted(lps, reverse=True) and len(nxt.top) == 5
    assert all(t.logprob <= 0 for t in nxt.top)
    # Candidates by string (single tokens) and by id give the same numbers.
    single = lm.decode([nxt.top[0].id])
    if lm.encode(single) == [nxt.top[0].id]:
        by_str = lm.next_token_logprobs([PROMPTS[0]], candidates=[single])[0]
        assert by_str.candidates[0] == pytest.approx(nxt.top[0].logprob, abs=1e-5)


def test_next_token_prefix_hint_changes_nothing(lm):
    """The prefix hint of next_token_logprobs (every backend): same numbers and top-k with
    it as without, for contexts that start with it and for one that does not."""
    prefix = "Q: What is 5 times 5?\nA: 25\n\n"
    contexts = [prefix + "Q: What is 6 times 2?\nA:", prefix + "Q: What is 7 plus 1?\nA:",
                "The quick brown"]
    cands = [lm.encode(" 1")[0], lm.encode("2")[0]]
    plain = lm.next_token_logprobs(contexts, cands, top_k=10)
    hinted = lm.next_token_logprobs(contexts, cands, top_k=10, prefix=prefix)
    for a, b in zip(plain, hinted):
        assert b.candidates == pytest.approx(a.candidates, abs=1e-5)
        assert [t.id for t in b.top] == [t.id for t in a.top]
    if isinstance(lm, FakeLM):
        assert lm.prefix_hits == 2
    else:
        assert lm.scoring_stats.reused >= 2


def test_multi_token_candidate_is_refused(lm):
    with pytest.raises(TokenizationError, match="encodes to .* tokens"):
        lm.next_token_logprobs(["x"], candidates=["Q: What is"])


def test_identity_properties(lm):
    d = lm.describe()
    assert d["weights_sha256"] and len(d["weights_sha256"]) == 64
    assert lm.max_length > 0 and lm.dtype in ("float32", "float64") and lm.device == "cpu"
    assert lm.batch_invariant


def test_stop_rules_are_data(lms):
    lm = lms["gpt_neox"]
    gen = lm.generator(PARAGRAPH, 8)
    stops = [i for i, s in enumerate(gen.stop.tolist()) if s]
    texts = [lm.tokenizer.decode([i]) for i in stops]
    assert all("\n\n" in t or i == lm.tokenizer.eos_token_id for i, t in zip(stops, texts))
    assert lm.generator(NEWLINE, 8).stop.sum() > gen.stop.sum()
    never = StopRule((), eos=False)
    out = lm.generate_until([GenerateRequest(PROMPTS[0], 7, never)])[0]
    assert len(lm.encode(out)) >= 6       # no stop: all 7 tokens (re-encoding may merge)
    with pytest.raises(ValueError):
        StopRule(("",))
    with pytest.raises(TypeError):
        StopRule("\n")


def test_fake_lm_answers_are_scripted():
    fake = FakeLM(answers={"Q: 2 times 3?\nA:": " 6\n"})
    assert fake.generate_until([GenerateRequest("Q: 2 times 3?\nA:")]) == [" 6\n"]
    other = fake.generate_until([GenerateRequest("Q: 2 times 4?\nA:", 3, StopRule((), True))])
    assert len(other[0]) <= 3
    assert fake.loglikelihood([LoglikelihoodRequest("Q: 2 times 3?\nA:", " 6")])[0].is_greedy
    assert FakeLM(seed=1).weights_sha256 != FakeLM(seed=2).weights_sha256


def test_hf_generate_until_matches_the_decoder(lms, instances_dir):
    lm = lms["gpt_neo"]
    t = pq.read_table(instances_dir / "prompts.parquet").slice(0, 12).to_pylist()
    reqs = [GenerateRequest(r["prompt"], prefix=r["prefix"]) for r in t]
    gen = Generator(lm.model, lm.tokenizer, batch_size=5, preallocate=False)
    plain = [gen.generate_group("", [r["prompt"]], reuse=False)[0] for r in t]
    assert lm.generate_until(reqs) == plain


def test_registry_errors():
    assert {"hf", "fake"} <= set(backends())
    with pytest.raises(ModelError, match="unknown model backend 'vllm'; known backends: fake, hf"):
        get_lm("demo", backend="vllm")
    with pytest.raises(ModelError, match="unknown model 'gpt-k'.*Known aliases: .*demo"):
        get_lm("gpt-k")
    assert isinstance(get_lm("x", backend="fake"), FakeLM)
    assert issubclass(TokenizationError, FreqgapError)
