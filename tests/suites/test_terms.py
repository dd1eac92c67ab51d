"""Term rules: the word -> term reduction and each benchmark's content words."""

import yaml

from freqgap.counting.rules import TermRules
from freqgap.suites import terms


def test_word_term_rule():
    assert terms.word_term("Crops.") == "crop"
    assert terms.word_term("glass") == "glass"
    assert terms.word_term("gas") == "gas"
    assert terms.word_term("Earth's") == "earth"
    assert terms.word_term("1,000") is None and terms.word_term("H2O") is None


def test_heads_and_subjects():
    assert terms.head("vast green fields") == "field"
    assert terms.subject("Bluebirds are not found in") == "bluebird"
    assert terms.content_terms("An introduction is commonly the first section of a "
                               "communication.") == ["introduction", "first", "section",
                                                     "communication"]
    assert terms.head("the same") is None
    assert terms.term_set("b", "a") == ("a", "b") and terms.term_set("a", None) == (terms.NO_TERM,) * 2


def test_terms_are_countable_by_the_counting_rules():
    """Each term, written in the text (either number), is counted under itself."""
    vocab = ["crop", "field", "bluebird", "glass"]
    rules = TermRules(vocab=tuple(yaml.safe_load(yaml.safe_dump(vocab))))
    for word in ("crops", "Crop", "fields", "Bluebirds", "glass"):
        assert rules.word_term(word) == terms.word_term(word)
