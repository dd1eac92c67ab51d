"""Quantifier stimuli: loader errors and the four metrics on hand-set surprisals."""

import pytest

from freqgap.suites import quantifiers as qz
from freqgap.suites.io import SuiteDataError

from tests.suites.conftest import FIXTURES


def test_loader_and_errors(tmp_path):
    stim = qz.load(FIXTURES / "quantifiers.csv")
    assert len(stim) == 8 and stim[0].context == "Most farmers grow"
    assert stim[0].bare_context == "Farmers grow" and stim[0].line == 2
    with pytest.raises(SuiteDataError, match=r"quantifiers_bad.csv:1: header lacks field\(s\) typicality"):
        qz.load(FIXTURES / "quantifiers_bad.csv")
    bad = tmp_path / "b.csv"
    bad.write_text("backbone,quantifier,quantifier_type,critical_word,typicality\n"
                   "farmers grow,Most,most,crops,typical\nfarmers grow,Few,some,crops,typical\n")
    with pytest.raises(SuiteDataError, match=r"b.csv:3: quantifier_type 'some' is not most or few"):
        qz.load(bad)
    bad.write_text("backbone,quantifier,quantifier_type,critical_word,typicality\n"
                   "farmers grow,Most,most,,typical\n")
    with pytest.raises(SuiteDataError, match=r"b.csv:2: empty field\(s\) critical_word"):
        qz.load(bad)


def test_metrics_on_hand_set_surprisals():
    stim = qz.load(FIXTURES / "quantifiers.csv")
    comps = qz.plan(stim)
    assert [c.metric for c in comps].count("earlier") == 4
    assert [c.metric for c in comps].count("control") == 2
    assert [c.metric for c in comps].count("exp1") == 4
    assert [c.metric for c in comps].count("exp2") == 8
    # A quantifier-blind model: surprisal depends on the word only (typical words easy),
    # the bare backbone a little harder than any quantified one.
    S = {}
    for s in stim:
        base = 2.0 if s.typicality == "typical" else 9.0
        S[(s.context, s.critical_word)] = base
        S[(s.bare_context, s.critical_word)] = base + 0.5
    correct = [c.judge(S)[0] for c in comps]
    m = qz.summarise(comps, correct)
    assert m["earlier_most"] == 1.0 and m["earlier_few"] == 0.0   # typicality, not "few"
    assert m["control"] == 1.0 and m["quantifier_blind_few"] == 0.0
    assert m["exp1"] == 0.0            # equal surprisal under most and few: never "right"
    # exp2: quantified always lower -> right for (most, typical) and (few, atypical) only
    assert m["exp2"] == 0.5 and m["exp2_most"] == 0.5 and m["exp2_few"] == 0.5
    assert m["n_exp2"] == 8
    # Now a model that understands "few" for the first backbone only
    S2 = dict(S)
    S2[("Few farmers grow", "crops")] = 9.5
    S2[("Few farmers grow", "worms")] = 1.0
    correct = [c.judge(S2)[0] for c in comps]
    m2 = qz.summarise(comps, correct)
    assert m2["earlier_few"] == 0.5
    assert m2["exp1"] == 0.5          # farmers: crops most<few, worms few<most both right
    assert m2["exp1_typical"] == 0.5 and m2["exp1_atypical"] == 0.5
    first_exp1 = next(c for c in comps if c.metric == "exp1")
    assert first_exp1.judge(S2) == (True, "most")


def test_context_and_adverbial_templates():
    stim = qz.load(FIXTURES / "quantifiers_context.csv")
    assert len(stim) == 8
    ctx, adv = stim[0], stim[4]
    assert ctx.context == "Alex was an unusual toddler. Most kids prefer"
    assert ctx.bare_context == "Alex was an unusual toddler. Kids prefer"
    assert stim[2].context == "Alex was an unusual toddler. Few kids prefer"
    assert adv.context == "Farmers often grow" and stim[6].context == "Farmers rarely grow"
    assert adv.bare_context == "Farmers grow" and adv.backbone == "Farmers grow"
    assert ctx.backbone == "kids prefer"
    comps = qz.plan(stim)
    counts = {m: [c.metric for c in comps].count(m) for m in ("earlier", "control", "exp1", "exp2")}
    assert counts == {"earlier": 4, "control": 2, "exp1": 4, "exp2": 8}
    control = [c for c in comps if c.metric == "control"]
    assert [c.low for c in control] == [("Alex was an unusual toddler. Kids prefer", "candy"),
                                        ("Farmers grow", "crops")]
    # the two designs never mix: every comparison stays within one frame
    for c in comps:
        assert (c.low[0].startswith("Alex") == c.high[0].startswith("Alex"))
    # a model that reads the adverb: "rarely" makes crops surprising, worms expected
    S = {k: 5.0 for c in comps for k in (c.low, c.high)}
    S[("Farmers often grow", "crops")] = 1.0
    S[("Farmers rarely grow", "worms")] = 1.0
    m = qz.summarise(comps, [c.judge(S)[0] for c in comps])
    exp1 = [c for c in comps if c.metric == "exp1" and c.low[0].startswith("Farmers")]
    assert all(c.judge(S)[0] for c in exp1)
    assert m["exp1"] == 0.5           # the context items are tied (5 vs 5): wrong


def test_template_errors_name_the_line(tmp_path):
    head = "template,subject,verb,quantifier,quantifier_type,critical_word,typicality\n"
    bad = tmp_path / "t.csv"
    bad.write_text(head + "{subject} {verb},Farmers,grow,often,most,crops,typical\n")
    with pytest.raises(SuiteDataError, match=r"t.csv:2: template .* must contain \{quantifier\}"):
        qz.load(bad)
    bad.write_text(head + "{subject} {quantifier} {object},Farmers,grow,often,most,crops,typical\n")
    with pytest.raises(SuiteDataError, match=r"t.csv:2: template .* needs column\(s\) object"):
        qz.load(bad)
    bad.write_text(head + ",Farmers,grow,often,most,crops,typical\n")
    with pytest.raises(SuiteDataError, match=r"t.csv:2: template '\{quantifier\} \{backbone\}' "
                                             r"needs column\(s\) backbone"):
        qz.load(bad)


def test_default_layout_is_unchanged():
    """The existing layout's texts, as the earlier code built them."""
    stim = qz.load(FIXTURES / "quantifiers.csv")
    assert [(s.context, s.bare_context) for s in stim[:4]] == [
        ("Most farmers grow", "Farmers grow"), ("Most farmers grow", "Farmers grow"),
        ("Few farmers grow", "Farmers grow"), ("Few farmers grow", "Farmers grow")]
    assert qz.bare("farmers grow") == "Farmers grow"
