"""The model-interface calls the suites make, against a direct forward pass: continuation
log-probs (quantifiers), next-token log-probs and top-k (NeQA, TINaD); batched = alone."""

import math

import pytest
import torch

from freqgap.inference.lm import LoglikelihoodRequest

CTX = ["Most farmers grow", "Few farmers grow", "Is the following statement True or False? "
       "A puppy is commonly a young dog.", "Q: What is 12 times 7?\nA:", ""]
CONT = [" crops", " worms", " True", " 84", " farmers grow crops"]


def direct(model, tok, context, continuation):
    """log p of each continuation token from one unpadded forward pass over ctx + cont."""
    c = tok(context, add_special_tokens=False)["input_ids"] or [tok.bos_token_id]
    k = tok(continuation, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([c + k])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
    return [logp[len(c) - 1 + j, t].item() for j, t in enumerate(k)], k, logp[len(c) - 1]


def test_loglikelihood_matches_direct_computation(tiny_lm, tiny):
    model, tok = tiny
    scores = tiny_lm.loglikelihood([LoglikelihoodRequest(c, k) for c, k in zip(CTX, CONT)])
    for s, c, k in zip(scores, CTX, CONT):
        per_token, ids, _ = direct(model, tok, c, k)
        assert list(s.token_ids) == ids
        assert s.token_logprobs == pytest.approx(per_token, abs=1e-4)
        assert s.surprisal_bits("sum") == pytest.approx(-sum(per_token) / math.log(2), abs=1e-4)
        assert s.surprisal_bits("mean") == pytest.approx(-sum(per_token) / len(ids) / math.log(2),
                                                         abs=1e-4)
    assert any(len(s.token_ids) > 1 for s in scores)  # multi-subword words are exercised


def test_batched_equals_alone(tiny_lm):
    reqs = [LoglikelihoodRequest(c, k) for c, k in zip(CTX, CONT)]
    batched = tiny_lm.loglikelihood(reqs)
    for s, r in zip(batched, reqs):
        assert s.token_logprobs == pytest.approx(tiny_lm.loglikelihood([r])[0].token_logprobs,
                                                 abs=1e-5)
    ids = [tiny_lm.encode(" True")[0], tiny_lm.encode(" False")[0]]
    nt = tiny_lm.next_token_logprobs(CTX, ids, top_k=50)
    for row, c in zip(nt, CTX):
        alone = tiny_lm.next_token_logprobs([c], ids, top_k=50)[0]
        assert row.candidates == pytest.approx(alone.candidates, abs=1e-5)
        assert [t.id for t in row.top] == [t.id for t in alone.top]


def test_next_token_and_top_k_match_direct_computation(tiny_lm, tiny):
    model, tok = tiny
    ids = [tiny_lm.encode(" A")[0], tiny_lm.encode(" B")[0]]
    rows = tiny_lm.next_token_logprobs(CTX[:4], ids, top_k=50)
    for row, c in zip(rows, CTX[:4]):
        _, _, logp = direct(model, tok, c, " A")
        lp = logp.tolist()
        assert row.candidates == pytest.approx([lp[i] for i in ids], abs=1e-4)
        want = sorted(range(len(lp)), key=lambda i: (-lp[i], i))[:50]
        got = [t.id for t in row.top]
        assert len(got) == 50 and set(got[:45]) <= set(want)   # order equal up to float noise
        assert math.fsum(math.exp(v) for v in lp) == pytest.approx(1.0, abs=1e-4)
