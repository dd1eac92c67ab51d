"""QA items keyed by an entity pair (Kandpal et al. 2023): the file, the terms, the prompt
and the rule that judges an answer.

The frequency key of an item is its (subject, answer entity) pair, and ω is the number of
corpus documents holding both (`freqgap count --unit document`). The pair must be spelled
as the counter spells terms, so an entity's term is defined here once (`entity_term`), by
the counter's normalization of a listed term. A multi-word entity is simply its string
("new york"), one term (a phrase of a term list). The judging rule (`is_correct`) is the usual
normalized exact match, so that "Quellton." and "the Quellton" are not counted wrong.
"""

from __future__ import annotations

import csv
import functools
import io
import string
from dataclasses import dataclass
from pathlib import Path

import yaml

from freqgap.manifest import atomic_write_text
from freqgap.suites.io import SuiteDataError, as_text, iter_jsonl, require

FIELDS = ("id", "question", "answer", "subject", "answer_entity")
FREQ_DEF = "subject,answer"          # the instance_terms definition of the entity pair
TASK = "qa/few_shot"
ARTICLES = frozenset(("a", "an", "the"))
_PUNCT = str.maketrans("", "", string.punctuation)


@dataclass(frozen=True)
class Item:
    """One question with its accepted answers and its two entities."""

    key: str
    line: int
    question: str
    answer: str
    subject: str
    answer_entity: str
    relation: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def pair(self) -> tuple[str, str]:
        """The frequency key: the two entity terms sorted as strings."""
        return tuple(sorted((entity_term(self.subject), entity_term(self.answer_entity))))  # type: ignore[return-value]


def entity_term(text: str) -> str:
    """The term an entity is counted under: the counter's own normalization of a listed
    term (TermRules.listed_term's tokens) under the strip-punct rule, which a count of
    entities uses: each whitespace token lower-cased with ASCII punctuation stripped from
    its ends, empty tokens dropped, joined by one space ("St. Louis" -> "st louis")."""
    from freqgap.counting.rules import TERM_TOKEN_SEPARATOR

    tokens = (_strip_punct_rules().normalize(t) for t in text.split())
    return TERM_TOKEN_SEPARATOR.join(t for t in tokens if t)


@functools.cache
def _strip_punct_rules():
    from freqgap.counting.rules import TermRules

    return TermRules(number_rule="strip-punct")


def normalize_answer(text: str) -> str:
    """Lower-case, ASCII punctuation removed, the articles a/an/the dropped as words,
    whitespace collapsed (SQuAD's answer normalization)."""
    words = text.lower().translate(_PUNCT).split()
    return " ".join(w for w in words if w not in ARTICLES)


def first_line(continuation: str) -> str:
    """What the model answered: its continuation up to the first newline."""
    return continuation.split("\n", 1)[0]


def is_correct(continuation: str, item: Item) -> bool:
    """Normalized exact match of the first line against the answer or an alias (an answer
    that normalizes to nothing is never right)."""
    got = normalize_answer(first_line(continuation))
    return bool(got) and got in {normalize_answer(a) for a in (item.answer, *item.aliases)}


def shot_text(item: Item) -> str:
    """One few-shot example: `Q: question\\nA: answer` and a blank line."""
    return f"Q: {item.question}\nA: {item.answer}\n\n"


def prompt(shots: list[Item], item: Item) -> str:
    """The shots, then `Q: question\\nA:`; the model continues after the colon."""
    return "".join(shot_text(s) for s in shots) + f"Q: {item.question}\nA:"


def _aliases(obj: dict, path: Path, lineno: int) -> tuple[str, ...]:
    value = obj.get("aliases", [])
    if not isinstance(value, list) or not all(isinstance(a, str) and a.strip() for a in value):
        raise SuiteDataError(f"{path}:{lineno}: field 'aliases' is {value!r}, not a list of "
                             "non-empty strings")
    return tuple(value)


def _item(obj: dict, path: Path, lineno: int) -> Item:
    require(obj, FIELDS, path, lineno)
    key = obj["id"]
    if isinstance(key, bool) or not isinstance(key, (str, int)) or str(key) == "":
        raise SuiteDataError(f"{path}:{lineno}: field 'id' is {key!r}, not a string or an integer")
    text = {f: as_text(obj, f, path, lineno) for f in FIELDS[1:]}
    for f, value in text.items():
        if not value.strip():
            raise SuiteDataError(f"{path}:{lineno}: field {f!r} is empty")
    relation = obj.get("relation")
    if relation is not None:
        relation = as_text(obj, "relation", path, lineno)
    item = Item(str(key), lineno, text["question"], text["answer"], text["subject"],
                text["answer_entity"], relation, _aliases(obj, path, lineno))
    for f in ("subject", "answer_entity"):
        if not entity_term(text[f]):
            raise SuiteDataError(f"{path}:{lineno}: field {f!r} is {text[f]!r}: punctuation "
                                 "only, no term to count")
    if item.pair[0] == item.pair[1]:
        raise SuiteDataError(f"{path}:{lineno}: subject and answer_entity are the same term "
                             f"{item.pair[0]!r}; a document-unit pair needs two distinct terms")
    return item


def load(path: str | Path) -> list[Item]:
    """Every item of a QA JSON Lines file; the first bad line stops with FILE:LINE."""
    path = Path(path)
    items, seen = [], {}
    for lineno, obj in iter_jsonl(path):
        item = _item(obj, path, lineno)
        if item.key in seen:
            raise SuiteDataError(f"{path}:{lineno}: id {item.key!r} already on line "
                                 f"{seen[item.key]}; ids must be unique")
        seen[item.key] = lineno
        items.append(item)
    if not items:
        raise SuiteDataError(f"{path}: no items")
    return items


def split_shots(items: list[Item], shots: int, path: str | Path) -> tuple[list[Item], list[Item]]:
    """(the first `shots` items: the few-shot examples, the rest: the evaluated items)."""
    if len(items) <= shots:
        raise SuiteDataError(f"{path}: {len(items)} items, but the first {shots} are the "
                             "few-shot examples (conf/suites.yaml qa.shots); add items")
    return items[:shots], items[shots:]


def count_vocabulary(terms: list[str]) -> list[str]:
    """The entity terms the counter takes through --vocab: the listed terms of one word (a
    phrase needs a term list)."""
    return [t for t in listed_terms(terms) if " " not in t]


def listed_terms(terms: list[str]) -> list[str]:
    """The entity terms for a term list (--terms): all but numbers, which are terms already."""
    return sorted({t for t in terms if not (t.isascii() and t.isdigit())})


def write_count_inputs(items: list[Item], dest: str | Path) -> dict[str, Path]:
    """The counting job's inputs for these items under `dest`: pairs.csv (`t1,t2`, for
    --pairs), entities.txt (the entity terms but numbers, one per line, for --terms) and
    vocab.yaml (the single-word ones, for --vocab, the older route)."""
    dest = Path(dest)
    pairs = sorted({it.pair for it in items})
    terms = sorted({t for p in pairs for t in p})
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("t1", "t2"))
    writer.writerows(pairs)
    files = {"pairs": dest / "pairs.csv", "entities": dest / "entities.txt",
             "vocab": dest / "vocab.yaml"}
    atomic_write_text(files["pairs"], buf.getvalue())
    atomic_write_text(files["entities"], "".join(f"{t}\n" for t in listed_terms(terms)))
    atomic_write_text(files["vocab"], "# single-word entity terms of the QA items: pass to "
                      "the counting job with --vocab\n"
                      + yaml.safe_dump(count_vocabulary(terms), default_flow_style=False))
    return files
