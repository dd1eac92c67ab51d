"""Continuation and next-token log-probabilities against a direct forward pass; batching."""

import math

import pytest
import torch

from freqgap.inference.logprobs import (continuation_logprobs, first_token_id,
                                        next_token_logprobs)

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
    return [logp[len(c) - 1 + j, t].item() for j, t in enumerate(k)], k


def test_surprisal_sums_match_direct_computation(tiny):
    model, tok = tiny
    scores = continuation_logprobs(model, tok, CTX, CONT, batch_size=8)
    for s, c, k in zip(scores, CTX, CONT):
        per_token, ids = direct(model, tok, c, k)
        assert list(s.token_ids) == ids
        assert s.token_logprobs == pytest.approx(per_token, abs=1e-4)
        assert s.total == pytest.approx(sum(per_token), abs=1e-4)
        assert s.mean == pytest.approx(sum(per_token) / len(ids), abs=1e-4)
        assert s.surprisal_bits("sum") == pytest.approx(-sum(per_token) / math.log(2), abs=1e-4)
    assert any(len(s.token_ids) > 1 for s in scores)  # multi-subword words are exercised


def test_batched_equals_unbatched(tiny):
    model, tok = tiny
    batched = continuation_logprobs(model, tok, CTX, CONT, batch_size=5)
    for s, c, k in zip(batched, CTX, CONT):
        alone = continuation_logprobs(model, tok, [c], [k], batch_size=1)[0]
        assert s.token_logprobs == pytest.approx(alone.token_logprobs, abs=1e-5)
    nt = next_token_logprobs(model, tok, CTX, batch_size=3)
    nt1 = torch.cat([next_token_logprobs(model, tok, [c], batch_size=1) for c in CTX])
    assert torch.allclose(nt, nt1, atol=1e-5)
    assert torch.allclose(nt.exp().sum(-1), torch.ones(len(CTX)), atol=1e-4)


def test_next_token_selection_agrees_with_continuation(tiny):
    model, tok = tiny
    tid = first_token_id(tok, " True")
    sel = next_token_logprobs(model, tok, CTX[:3], token_ids=[tid], batch_size=2)
    one = continuation_logprobs(model, tok, CTX[:3], [tok.decode([tid])] * 3)
    assert sel.shape == (3, 1)
    for row, s in zip(sel[:, 0].tolist(), one):
        assert s.token_ids == (tid,) and row == pytest.approx(s.total, abs=1e-5)


def test_bad_inputs(tiny):
    model, tok = tiny
    with pytest.raises(ValueError, match="contexts for"):
        continuation_logprobs(model, tok, ["a"], ["b", "c"])
    with pytest.raises(ValueError, match="encodes to no tokens"):
        continuation_logprobs(model, tok, ["a"], [""])
