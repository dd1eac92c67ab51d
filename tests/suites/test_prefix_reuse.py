"""NeQA's few-shot letter scoring with the shots' key/value cache reused = without it."""

import math

import pytest

from freqgap.inference.generate import GroupStats
from freqgap.suites.runner import NeQASuite, shared_blocks
from freqgap.suites import neqa
from tests.suites.conftest import FIXTURES


def test_shared_blocks_are_the_header_and_shots():
    suite = NeQASuite(FIXTURES / "neqa.jsonl", {})
    prompts, _ = suite.prompts("neqa/few_shot")
    prefix = shared_blocks(prompts)
    assert prefix.startswith(neqa.HEADER) and prefix.endswith("\n\n")
    assert prefix.count("Question: ") == len(neqa.SHOTS)
    assert all(p.startswith(prefix) and p[len(prefix):].startswith("Question: ")
               for p in prompts)
    assert shared_blocks(suite.prompts("neqa/zero_shot")[0]) == neqa.HEADER + "\n\n"
    assert shared_blocks(["a\n\nb", "c\n\nb"]) == "" and shared_blocks([]) == ""


@pytest.mark.parametrize("scoring", ["top50", "full"])
def test_few_shot_run_same_with_and_without_reuse(tiny_model_dir, scoring):
    from freqgap.inference.lm import get_lm

    conf = {"prompt_types": ["zero_shot", "few_shot"], "letter_scoring": scoring}
    reuse = get_lm(str(tiny_model_dir), device="cpu", batch_size=4)
    plain = get_lm(str(tiny_model_dir), device="cpu", batch_size=4, reuse_prefix=False)
    n = len(NeQASuite(FIXTURES / "neqa.jsonl", conf).items)
    try:
        reuse.scoring_stats = GroupStats()
        p1, d1, m1 = NeQASuite(FIXTURES / "neqa.jsonl", conf).evaluate(reuse)
        p2, d2, m2 = NeQASuite(FIXTURES / "neqa.jsonl", conf).evaluate(plain)
        assert reuse.scoring_stats.reused == 2 * n and reuse.scoring_stats.fallback == 0
        assert plain.scoring_stats.reused == 0 and plain.scoring_stats.fallback == 2 * n
    finally:
        reuse.close()
        plain.close()
    assert p1 == p2
    assert m1 == m2
    for a, b in zip(d1, d2):
        assert (a["task"], a["instance_id"], a["pred"]) == (b["task"], b["instance_id"], b["pred"])
        for key in ("logp_a", "logp_b"):
            if math.isinf(a[key]) or math.isinf(b[key]):
                assert a[key] == b[key]
            else:
                assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-5)
    assert any(r["task"] == "neqa/few_shot" for r in p1)
