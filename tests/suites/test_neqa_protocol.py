"""NeQA as the authors run it: every prompt type byte for byte (hand-written fixtures in
tests/fixtures/suites/neqa_authors/expected, from the authors' templates), Task 2 from the
normalized files, the seed-42 sample, top-50 letter scoring with its coin, the letter-token
check, the ISP CSV form and the composed metric."""

import math
import random

import pytest

from freqgap.inference.fake import FakeLM
from freqgap.inference.lm import NextTokenLogprobs, TopToken
from freqgap.suites import neqa
from freqgap.suites.io import SuiteDataError
from freqgap.suites.runner import NeQASuite

from tests.suites.conftest import FIXTURES

AUTH = FIXTURES / "neqa_authors"
KINDS = ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot", "task1", "task2",
         "task2_hint")


def expected(kind):
    text = (AUTH / "expected" / f"{kind}.txt").read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n%%%%\n")


@pytest.fixture()
def suite():
    return NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl")


@pytest.mark.parametrize("kind", KINDS)
def test_every_prompt_type_is_byte_identical(suite, kind):
    prompts, golds = suite.prompts(f"neqa/{kind}")
    want = expected(kind)
    assert len(want) == 3
    for got, exp in zip(prompts, want, strict=True):
        assert got == exp
    gold = {"task1": [0, 0, 0], "task2": [1, 0, 1], "task2_hint": [1, 0, 1]}.get(kind, [1, 1, 1])
    assert golds == gold


def test_task2_uses_the_normalized_siblings_by_default(suite):
    assert [p.rsplit("/", 1)[1] for p in suite.task2_files] == \
        ["neqa_3_normalized.jsonl", "obqa_3_normalized.jsonl"]
    # passing the non-normalized files explicitly gives the prompts the issue reported
    plain = NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl",
                      task2_data=AUTH / "neqa_3.jsonl", task2_original=AUTH / "obqa_3.jsonl")
    first = plain.prompts("neqa/task2")[0][0]
    assert first.startswith('Sentence 1: "Pushing on a pedal is an example of ___ ? force."')
    assert suite.prompts("neqa/task1") == plain.prompts("neqa/task1")  # Task 1 unchanged


def test_task2_files_must_match_line_for_line(tmp_path):
    short = tmp_path / "neqa_n.jsonl"
    short.write_text("".join((AUTH / "neqa_3_normalized.jsonl").read_text().splitlines(True)[:2]))
    with pytest.raises(SuiteDataError, match=r"neqa_n.jsonl: 2 Task 2 questions for the 3"):
        NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl", task2_data=short)
    with pytest.raises(SuiteDataError, match="need --original"):
        NeQASuite(AUTH / "neqa_3.jsonl", {}, task2_data=AUTH / "neqa_3_normalized.jsonl")


def test_sample_is_the_authors_seed_42_shuffle(tmp_path):
    lines = [f'{{"question": "Question number {i} is not", "choices": ["x{i}", "y{i}"], '
             f'"answer": {i % 2}}}\n' for i in range(40)]
    path = tmp_path / "neqa_40.jsonl"
    path.write_text("".join(lines))
    # the authors' procedure, written out
    items = list(lines)
    random.seed(42)
    random.shuffle(items)
    theirs = [l.split('"question": "')[1].split('"')[0] for l in items[:7]]
    s = NeQASuite(path, {}, sample=7, seed=42)
    assert [it.question for it in s.items] == theirs
    assert s.positions == [int(q.split()[2]) for q in theirs]
    assert s.positions == neqa.sample_indices(40, 7, 42)
    assert neqa.sample_indices(40, 7, 1) != s.positions
    with pytest.raises(SuiteDataError, match="--limit and --sample"):
        NeQASuite(path, {}, sample=7, limit=3)
    with pytest.raises(SuiteDataError, match="--sample 41: must be between 1 and the 40"):
        NeQASuite(path, {}, sample=41)


def test_sample_applies_to_the_paired_files_alike():
    s = NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl", sample=2, seed=42)
    pos = neqa.sample_indices(3, 2, 42)
    assert [it.key for it in s.items] == [["297", "9-1", "14-894"][p] for p in pos]
    assert [o.key for o, _ in s.pairs] == [it.key for it in s.items]
    # Task 2 is not sampled: the authors' Task2 takes the first N lines in file order
    assert [o.key for o, _ in s.task2_pairs] == ["297", "9-1"]
    first = s.prompts("neqa/task2")[0][0]
    assert first.endswith("A. the same\nB. different\nAnswer:")
    assert first == expected("task2")[0]


def test_isp_csv_and_jsonl_load_to_the_same_items():
    csv_items = neqa.load(FIXTURES / "neqa_isp.csv")
    jsonl_items = neqa.load(FIXTURES / "neqa_isp.jsonl")
    assert [(i.question, i.choices, i.answer, i.isp_prompt) for i in csv_items] == \
        [(i.question, i.choices, i.answer, i.isp_prompt) for i in jsonl_items]
    assert csv_items[0].line == 2 and csv_items[1].line == 8   # first line of each record


def test_isp_bad_classes(tmp_path):
    bad = tmp_path / "isp.csv"
    bad.write_text('prompt,classes,answer_index\n"Question: q\nA. a\nB. b\nAnswer:",'
                   '"__import__(\'os\')",0\n')
    with pytest.raises(SuiteDataError, match=r"isp.csv:2: field 'classes' .* is not a list"):
        neqa.load(bad)
    bad.write_text('prompt,classes,answer_index\n"Question: q\nA. a\nB. b\nAnswer:",'
                   '"[\' A\', \' B\', \' C\']",0\n')
    with pytest.raises(SuiteDataError, match=r"isp.csv:2: field 'classes' must list two"):
        neqa.load(bad)


def test_wrong_json_types_name_file_line_and_field(tmp_path):
    bad = tmp_path / "n.jsonl"
    bad.write_text('{"question": "fine", "choices": ["a", "b"], "answer": 0}\n'
                   '{"question": 12345, "choices": ["a", "b"], "answer": 0}\n')
    with pytest.raises(SuiteDataError, match=r"n.jsonl:2: field 'question' is 12345 \(number\), "
                                             "not a string"):
        neqa.load(bad)
    bad.write_text('{"question": "q", "choices": ["a", null], "answer": 0}\n')
    with pytest.raises(SuiteDataError, match=r"n.jsonl:1: field 'choices' is \['a', None\]"):
        neqa.load(bad)
    bad.write_text('{"prompt": null, "classes": [" A", " B"], "answer_index": 0}\n')
    with pytest.raises(SuiteDataError, match=r"n.jsonl:1: field 'prompt' is None \(null\)"):
        neqa.load(bad)


# ---------------------------------------------------------------------------- scoring
class ScriptedLM(FakeLM):
    """FakeLM whose next-token answers are scripted per prompt: (log p(A), log p(B),
    A in the top 50, B in the top 50)."""

    def __init__(self, script, **kw):
        super().__init__(**kw)
        self.script = script

    def next_token_logprobs(self, contexts, candidates=(), top_k=None, prefix=""):
        ids = self.candidate_ids(candidates)
        out = []
        for c in contexts:
            la, lb, a_top, b_top = self.script(c)
            filler = [i for i in range(1, len(self.vocab)) if i not in ids][:48]
            top = [TopToken(i, self.vocab[i], -0.1) for i in filler]
            top += [TopToken(ids[0], "A", la)] if a_top else []
            top += [TopToken(ids[1], "B", lb)] if b_top else []
            out.append(NextTokenLogprobs((la, lb), tuple(top[:top_k]), 0))
        return out


def test_top50_rule_and_its_seeded_coin():
    # item 0: A in the top 50, B not -> A; item 1: both in, B higher -> B;
    # item 2: both outside -> coin 1; item 3: tie -> coin 2; item 4: both outside -> coin 3
    script = {0: (-1.0, -9.0, True, False), 1: (-2.0, -1.0, True, True),
              2: (-20.0, -30.0, False, False), 3: (-3.0, -3.0, True, True),
              4: (-30.0, -20.0, False, False)}
    items = [f'{{"question": "Q{i} is not", "choices": ["a", "b"], "answer": 0}}\n'
             for i in range(5)]

    def run(tmp, scoring):
        path = tmp / "n.jsonl"
        path.write_text("".join(items))
        suite = NeQASuite(path, {"letters": ["A", "B"], "prompt_types": ["zero_shot"],
                                 "letter_scoring": scoring})
        lm = ScriptedLM(lambda c: script[int(c.split("Question: Q")[1].split()[0])])
        preds, details, metrics = suite.evaluate(lm)
        return [p["answer"] for p in preds], metrics

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        got, metrics = run(Path(tmp), "top50")
        coin = random.Random(42)
        coins = [coin.choice((0, 1)) for _ in range(3)]
        assert got == ["A", "B", "AB"[coins[0]], "AB"[coins[1]], "AB"[coins[2]]]
        assert metrics["both_letters_outside_top50"] == {"zero_shot": 2}
        full, _ = run(Path(tmp), "full")
        # full compares the log-probs themselves; only the tie takes the (first) coin
        assert full == ["A", "B", "A", "AB"[coins[0]], "B"]


def test_letter_token_check_names_the_tokenizer():
    lm = FakeLM("charlm")    # characters are tokens: " A" is [" ", "A"]
    with pytest.raises(neqa.LetterTokenError,
                       match=r"tokenizer of charlm: ' A' encodes as \[' ', 'A'\], whose first "
                             "token does not decode to the letter 'A'"):
        neqa.letter_token_ids(lm, [" A", " B"])
    assert neqa.letter_token_ids(lm, ["A", "B"]) == lm.encode("AB")
    with pytest.raises(neqa.LetterTokenError, match="share their first token"):
        neqa.letter_token_ids(lm, ["A", "A"])


def test_tiny_model_letters_are_single_tokens(tiny_lm):
    ids = neqa.letter_token_ids(tiny_lm, [" A", " B"])
    assert [tiny_lm.decode([i]) for i in ids] == [" A", " B"]


def test_top50_reproduces_the_rule_on_a_real_model(tiny_lm):
    """On the tiny transformers model: top50 predictions equal the rule applied by hand
    to the full next-token distribution (rank by log-prob, ties by lower id)."""
    import torch

    suite = NeQASuite(FIXTURES / "neqa.jsonl", {"prompt_types": ["zero_shot", "few_shot"]})
    preds, details, metrics = suite.evaluate(tiny_lm)
    ids = neqa.letter_token_ids(tiny_lm, [" A", " B"])
    tok, model = tiny_lm.tokenizer, tiny_lm.model
    rng = {}
    for task in ("neqa/zero_shot", "neqa/few_shot"):
        rng[task] = random.Random(42)
        prompts, golds = suite.prompts(task)
        got = [d["pred"] for d in details if d["task"] == task]
        for prompt, pred in zip(prompts, got):
            with torch.no_grad():
                x = torch.tensor([tok(prompt, add_special_tokens=False)["input_ids"]])
                lp = torch.log_softmax(model(input_ids=x).logits[0, -1].float(), -1).tolist()
            order = sorted(range(len(lp)), key=lambda i: (-lp[i], i))[:50]
            la = lp[ids[0]] if ids[0] in order else -math.inf
            lb = lp[ids[1]] if ids[1] in order else -math.inf
            want = 0 if la > lb else 1 if lb > la else rng[task].choice((0, 1))
            assert pred == want
    assert metrics["letter_scoring"] == "top50"


def test_composed_is_half_plus_t1_centred_times_task2_score():
    for t1, s2 in ((0.9, 0.2), (0.3, 0.8), (1.0, 0.0), (0.5, 0.77)):
        assert neqa.task2_score(s2) == pytest.approx(2 * s2 - 1)
        assert neqa.composed_accuracy(t1, s2) == pytest.approx(0.5 + (t1 - 0.5) * (2 * s2 - 1))
        assert neqa.composed_accuracy(t1, s2) == pytest.approx(t1 * s2 + (1 - t1) * (1 - s2))
    assert neqa.composed_accuracy(0.9, 0.0) == pytest.approx(0.1)   # never sees the negation
    assert neqa.composed_accuracy(0.9, 0.5) == pytest.approx(0.5)   # Task 2 at chance


def test_sum_scoring_for_multi_token_letters():
    """`sum`: each letter form as a continuation, its tokens' log-probs summed."""
    from freqgap.inference.lm import LoglikelihoodRequest

    lm = FakeLM("charlm")
    suite = NeQASuite(FIXTURES / "neqa.jsonl", {"prompt_types": ["zero_shot"],
                                                "letter_scoring": "sum"})
    preds, details, metrics = suite.evaluate(lm)
    prompts, _ = suite.prompts("neqa/zero_shot")
    for prompt, d in zip(prompts, details):
        a, b = lm.loglikelihood([LoglikelihoodRequest(prompt, " A"),
                                 LoglikelihoodRequest(prompt, " B")])
        assert len(a.token_ids) == 2
        assert (d["logp_a"], d["logp_b"]) == (a.total, b.total)
        assert d["pred"] == (0 if a.total > b.total else 1)
    assert metrics["letter_scoring"] == "sum"


def test_few_shot_hint_is_the_authors_wording(suite):
    """The authors' prompt_fewshot_hint: the few-shot prompt whose header adds the hint that
    says "the non-negated question" (their zero-shot hint says "the original question")."""
    header = ("The following are multiple choice questions (with answers) about common sense.")
    hint = (" Note that if there is a negation in the question, we should choose the wrong "
            "answer to the non-negated question.")
    got, golds = suite.prompts("neqa/few_shot_hint")
    for prompt, plain in zip(got, expected("few_shot"), strict=True):
        assert plain.startswith(header + "\n\n")
        assert prompt == header + hint + plain[len(header):]
    assert golds == [1, 1, 1]


def test_task2_takes_the_first_lines_in_file_order_under_sample():
    """The authors' Task2(max_instances) takes data[:max_instances] unshuffled (only NeQA and
    Task 1 use the seed-42 shuffle), and the option order alternates with the file position."""
    full = NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl")
    sampled = NeQASuite(AUTH / "neqa_3.jsonl", {}, original=AUTH / "obqa_3.jsonl",
                        sample=2, seed=42)
    order = neqa.sample_indices(3, 2, 42)
    assert sampled.positions == order
    for kind in ("task2", "task2_hint"):
        prompts, golds = sampled.prompts(f"neqa/{kind}")
        want_p, want_g = full.prompts(f"neqa/{kind}")
        assert (prompts, golds) == (want_p[:2], want_g[:2])
    zero, _ = sampled.prompts("neqa/zero_shot")
    assert zero == [full.prompts("neqa/zero_shot")[0][i] for i in order]
