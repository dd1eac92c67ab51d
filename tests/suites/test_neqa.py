"""NeQA: loaders (both layouts), the authors' prompts, A/B choice, CoT parsing, decomposition."""

import random

import pytest

from freqgap.suites import neqa
from freqgap.suites.io import SuiteDataError

from tests.suites.conftest import FIXTURES


def test_loads_both_layouts_to_the_same_items():
    own = neqa.load(FIXTURES / "neqa.jsonl")
    isp = neqa.load(FIXTURES / "neqa_isp.jsonl")
    assert len(own) == 6 and own[0].choices == ("force", "speed") and own[0].answer == 1
    assert own[0].metadata["negation_rule"] == "not/be"
    assert (isp[0].question, isp[0].choices, isp[0].answer) == \
        (own[0].question, own[0].choices, own[0].answer)
    assert (isp[1].question, isp[1].choices, isp[1].answer) == \
        (own[3].question, own[3].choices, own[3].answer)
    assert neqa.build_prompt(own[0], "zero_shot") == isp[0].isp_prompt


def test_wrong_shape_names_field_and_line(tmp_path):
    with pytest.raises(SuiteDataError, match=r"neqa_bad.jsonl:2: missing field 'answer'"):
        neqa.load(FIXTURES / "neqa_bad.jsonl")
    bad = tmp_path / "three.jsonl"
    bad.write_text('{"question": "q", "choices": ["a", "b", "c"], "answer": 0}\n')
    with pytest.raises(SuiteDataError, match=r"three.jsonl:1: field 'choices' must list two"):
        neqa.load(bad)
    isp = tmp_path / "isp.jsonl"
    isp.write_text('{"prompt": "no block here", "classes": [" A", " B"], "answer_index": 0}\n')
    with pytest.raises(SuiteDataError, match=r"isp.jsonl:1: field 'prompt' does not end"):
        neqa.load(isp)
    isp.write_text('{"prompt": "x", "classes": [" A", " B"]}\n')
    with pytest.raises(SuiteDataError, match=r"isp.jsonl:1: missing field 'answer_index'"):
        neqa.load(isp)


def test_prompts_are_the_authors_mmlu_style():
    item = neqa.load(FIXTURES / "neqa.jsonl")[0]
    zs = neqa.build_prompt(item, "zero_shot")
    assert zs == ("The following are multiple choice questions (with answers) about common "
                  "sense.\n\nQuestion: Pushing on a pedal isn't an example of\nA. force\n"
                  "B. speed\nAnswer:")
    hint = neqa.build_prompt(item, "zero_shot_hint")
    assert "Note that if there is a negation in the question, we should choose the wrong " \
           "answer to the original question.\n\nQuestion: Pushing" in hint
    fs = neqa.build_prompt(item, "few_shot")
    assert fs.count("Question: ") == 4 and fs.endswith(zs.split("\n\n")[1])
    assert "it isn't in\nA. danger\nB. safe ranges\nAnswer: B\n\n" in fs
    cot = neqa.build_prompt(item, "few_shot_cot")
    assert ('First, let\'s answer non-negated question: "If a cat has a body temp that is '
            'below average, it is in?"\nFor this non-negated question, we have A.\n'
            "Then, to answer the negated question, take the other answer, which would be B.\n"
            "So the answer is B.\n\n") in cot
    with pytest.raises(ValueError, match="unknown NeQA prompt type"):
        neqa.build_prompt(item, "five_shot")


def test_ab_choice_and_ties():
    rng = random.Random(42)
    assert neqa.choose(-1.0, -2.0, rng) == 0
    assert neqa.choose(-3.0, -2.0, rng) == 1
    ties = [neqa.choose(-1.0, -1.0, random.Random(42)) for _ in range(3)]
    assert len(set(ties)) == 1  # seeded: reproducible
    assert neqa.accuracy([0, 1, -1], [0, 0, 1]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("text,expected", [
    (" Let's think.\nSo the answer is B.\n\nQuestion: next\nSo the answer is A.", 1),
    (" So the answer is A.", 0),
    (" So the answer is C.", -1),
    (" the answer is A", -1),
    (" So the answer is A. So the answer is B.", -1),
    ("\n\nSo the answer is A.", -1),  # not in the first paragraph
])
def test_cot_parsing(text, expected):
    assert neqa.parse_cot(text) == expected


def test_task2_prompts_alternate_and_pair_by_id():
    neg = neqa.load(FIXTURES / "neqa.jsonl")
    orig = neqa.load(FIXTURES / "neqa_nonnegated.jsonl")
    pairs = neqa.pair_items(neg, orig, "x")
    assert all(o.key == n.key for o, n in pairs)
    assert pairs[0][0].question == "Pushing on a pedal is an example of"
    p0, g0 = neqa.task2_prompt(*pairs[0], 0)
    p1, g1 = neqa.task2_prompt(*pairs[1], 1)
    assert p0 == ('Sentence 1: "Pushing on a pedal is an example of force."\n'
                  'Sentence 2: "Pushing on a pedal isn\'t an example of force."\n'
                  "Question: The above two sentences are?\nA. the same\nB. different\nAnswer:")
    assert g0 == 1 and g1 == 0 and "A. different\nB. the same" in p1
    hinted, _ = neqa.task2_prompt(*pairs[0], 0, hint=True)
    assert hinted.startswith("Negated sentences are different from original sentences.\n\n")
    with pytest.raises(SuiteDataError, match="no non-negated question for id"):
        neqa.pair_items(neg, orig[:3], "orig.jsonl")


def test_composed_accuracy():
    assert neqa.composed_accuracy(1.0, 1.0) == 1.0
    assert neqa.composed_accuracy(0.8, 0.5) == pytest.approx(0.5)
    assert neqa.composed_accuracy(0.9, 0.2) == pytest.approx(0.9 * 0.2 + 0.1 * 0.8)
    assert neqa.composed_accuracy(0.0, 0.0) == 1.0  # wrong twice is right
    with pytest.raises(ValueError):
        neqa.composed_accuracy(1.2, 0.5)


def test_cot_generation_matches_plain_greedy(tiny_lm, tiny):
    """Few-shot CoT continuations through the model interface (shots' cache reused,
    blank-line stop) equal a plain one-prompt-at-a-time greedy loop over the full prompt."""
    import torch

    from freqgap.suites.runner import NeQASuite

    model, tok = tiny
    suite = NeQASuite(FIXTURES / "neqa.jsonl", {"cot_max_new_tokens": 10})
    prompts = suite.prompts("neqa/few_shot_cot")[0][:3]
    got = suite.chain_of_thought(tiny_lm, prompts, "neqa/few_shot_cot")
    for prompt, text in zip(prompts, got):
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        new = []
        with torch.no_grad():
            for _ in range(10):
                nxt = int(model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
                new.append(nxt)
                if "\n\n" in tok.decode([nxt]) or nxt == tok.eos_token_id:
                    break
        assert text == tok.decode(new, skip_special_tokens=True)


def test_hub_spec_without_datasets_library_is_a_clear_error(tmp_path):
    import importlib.util

    from freqgap.suites.io import materialise

    assert materialise(FIXTURES / "neqa.jsonl", tmp_path) == FIXTURES / "neqa.jsonl"
    if importlib.util.find_spec("datasets") is None:
        with pytest.raises(SuiteDataError, match="needs the `datasets` library"):
            materialise("hf:inverse-scaling/NeQA:train", tmp_path)
