"""Invented facts planted in a known number of documents: the entity demo's corpus.

Kandpal et al. (2023) relate QA accuracy to the number of pretraining documents that hold a
question's entity and its answer entity. Here that number is a setting: the fact of rank r
(a subject, a relation, an answer entity) is written into exactly
floor(max_documents * r^-exponent) documents, drawn at random, so every QA item's
relevant-document count is known before anything is counted, and a count can be checked
against it. An answer entity belongs to one fact and is written nowhere else, so the
documents holding a subject and its answer are exactly that fact's documents.

Names are invented (pronounceable, seeded), each holds a letter that the filler's own
invented names never use and none is an English word of the filler, so no filler token is
an entity. The filler is the arithmetic corpus's prose (freqgap/corpus/registers.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freqgap.config import ConfigError, load_conf

FACTS_STAGE = "generate_facts_corpus"
CORPUS_DIR = "corpus"           # the documents: corpus/facts-00.jsonl and _manifest.json
SHARD = "facts-00.jsonl"
QA_FILE = "qa.jsonl"            # one QA item per fact (freqgap/suites/qa.py reads it)

# Per relation: the question, and the statements a document may hold (one drawn per planting).
RELATIONS: dict[str, dict[str, Any]] = {
    "capital": {"question": "What is the capital of {s}?",
                "forms": ["The capital of {s} is {o}.", "{o} is the capital of {s}.",
                          "{s} has its capital at {o}."]},
    "currency": {"question": "What is the currency of {s}?",
                 "forms": ["The currency of {s} is the {o}.", "In {s} people pay with the {o}.",
                           "The {o} is the money of {s}."]},
    "river": {"question": "What is the longest river of {s}?",
              "forms": ["The longest river of {s} is the {o}.",
                        "The {o} is the longest river in {s}.",
                        "{s} is crossed by the {o}, its longest river."]},
    "founder": {"question": "Who founded {s}?",
                "forms": ["{s} was founded by {o}.", "The founder of {s} was {o}.",
                          "{o} founded {s}."]},
}
QA_FORM = "Q: {question}\nA: {o}"   # the prompt format of the QA suite

ONSETS = "b c d f g j k l m n p qu r s t v w x z br dr fl gr kr pl tr st zh".split()
VOWELS = "a e i o u a e o ia".split()
CODAS = ("", "", "", "n", "r", "l", "x", "nd", "ll", "m")
ENDINGS = ("", "", "", "ia", "on", "ton", "a", "el")
# Letters absent from the filler's invented names (registers.SYLL): every entity holds one.
MARK_LETTERS = frozenset("cfjquwxyz")


@dataclass(frozen=True)
class FactsProfile:
    """Every knob of one facts corpus; `to_dict()` is what the manifest records."""

    name: str
    seed: int
    subjects: int
    relations: tuple[str, ...]
    documents: int
    max_documents: int
    exponent: float
    filler_sentences: tuple[int, int]
    qa_form_rate: float

    def to_dict(self) -> dict[str, Any]:
        out = {k: copy.deepcopy(getattr(self, k)) for k in self.__dataclass_fields__}
        out["relations"] = list(self.relations)
        out["filler_sentences"] = list(self.filler_sentences)
        return out

    def planned_documents(self, rank: int) -> int:
        """Documents holding the fact of `rank` (1 = most frequent)."""
        return int(self.max_documents * rank ** -self.exponent)


@dataclass(frozen=True)
class Fact:
    id: str
    rank: int
    relation: str
    subject: str
    answer: str
    documents: tuple[int, ...]      # indices of the documents holding it, increasing

    def qa_item(self) -> dict[str, Any]:
        question = RELATIONS[self.relation]["question"].format(s=self.subject)
        return {"id": self.id, "question": question, "answer": self.answer,
                "subject": self.subject, "answer_entity": self.answer,
                "relation": self.relation}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def demo_settings(profile: str, conf: dict[str, Any] | None = None) -> dict[str, Any]:
    """conf/demo_entities.yaml's `defaults` merged with one profile (nested keys merged)."""
    conf = conf if conf is not None else load_conf("demo_entities")
    profiles = conf.get("profiles") or {}
    if profile not in profiles:
        raise ConfigError(f"conf/demo_entities.yaml: no profile {profile!r} "
                          f"(have: {', '.join(sorted(profiles))})")
    return _merge(conf.get("defaults") or {}, profiles[profile] or {})


def facts_profile(profile: str, overrides: dict[str, Any] | None = None,
                  conf: dict[str, Any] | None = None) -> FactsProfile:
    """The `corpus` settings of a conf/demo_entities.yaml profile, checked."""
    values = _merge(demo_settings(profile, conf).get("corpus") or {}, overrides or {})
    where = f"conf/demo_entities.yaml: profile {profile!r}: corpus"
    fields = set(FactsProfile.__dataclass_fields__) - {"name"}
    if set(values) != fields:
        raise ConfigError(f"{where}: unknown keys {sorted(set(values) - fields)}, "
                          f"missing keys {sorted(fields - set(values))}")
    unknown = [r for r in values["relations"] if r not in RELATIONS]
    if unknown or not values["relations"]:
        raise ConfigError(f"{where}.relations: {unknown or 'empty'}; choose from "
                          f"{', '.join(RELATIONS)}")
    lo, hi = (int(x) for x in values["filler_sentences"])
    if not 0 <= lo <= hi:
        raise ConfigError(f"{where}.filler_sentences must be [lo, hi] with 0 <= lo <= hi")
    if not 1 <= int(values["max_documents"]) <= int(values["documents"]):
        raise ConfigError(f"{where}: max_documents must be in 1..documents ({values['documents']})")
    if int(values["subjects"]) < 1 or float(values["exponent"]) < 0:
        raise ConfigError(f"{where}: subjects >= 1 and exponent >= 0 required")
    if not 0 <= float(values["qa_form_rate"]) <= 1:
        raise ConfigError(f"{where}.qa_form_rate must be in [0, 1]")
    return FactsProfile(name=profile, seed=int(values["seed"]), subjects=int(values["subjects"]),
                        relations=tuple(values["relations"]), documents=int(values["documents"]),
                        max_documents=int(values["max_documents"]),
                        exponent=float(values["exponent"]), filler_sentences=(lo, hi),
                        qa_form_rate=float(values["qa_form_rate"]))


def _rng(seed: int, part: str) -> random.Random:
    digest = hashlib.sha256(f"freqgap-facts:{seed}:{part}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def filler_words() -> frozenset[str]:
    """Every lower-case word the filler can write outside its invented names."""
    from freqgap.corpus import registers

    words = set(registers.NOUNS + registers.ADJS + registers.VERBS + registers.TECH
                + registers.PARTIES + registers.MONTHS)
    for templates in registers.REGISTER_TEMPLATES.values():
        for t in templates:
            words.update(w.strip(".,;:?!()'\"").lower() for w in registers.SLOT.sub(" ", t).split())
    return frozenset(words)


def invent_names(count: int, rng: random.Random) -> list[str]:
    """`count` distinct invented names ("Zorbia", "Quellton"), none ending in "s" (the
    counter folds a word plus "s" into the word), none a filler word."""
    taken = set(filler_words())
    names: list[str] = []
    while len(names) < count:
        word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                       for _ in range(2)) + rng.choice(ENDINGS)
        if (word in taken or word.endswith("s") or not MARK_LETTERS & set(word)
                or not 4 <= len(word) <= 11):
            continue
        taken.add(word)
        names.append(word.capitalize())
    return names


def plan_facts(profile: FactsProfile) -> list[Fact]:
    """Every fact with its rank and documents, in rank order; depends only on the profile."""
    rng = _rng(profile.seed, "facts")
    n_facts = profile.subjects * len(profile.relations)
    names = invent_names(profile.subjects + n_facts, rng)
    subjects, answers = names[:profile.subjects], names[profile.subjects:]
    pairs = [(r, s) for s in subjects for r in profile.relations]
    order = list(range(n_facts))
    rng.shuffle(order)                  # rank is independent of subject and relation
    facts = []
    for rank, i in enumerate(order, start=1):
        relation, subject = pairs[i]
        docs = rng.sample(range(profile.documents), profile.planned_documents(rank))
        facts.append(Fact(id=f"{relation}-{subject.lower()}", rank=rank, relation=relation,
                          subject=subject, answer=answers[i], documents=tuple(sorted(docs))))
    return facts


class FactsDocuments:
    """Writes the documents: filler prose with each planted fact's statement inserted."""

    def __init__(self, profile: FactsProfile, facts: list[Fact]) -> None:
        from freqgap.corpus.numbers import NumberModel
        from freqgap.corpus.profiles import load_profile
        from freqgap.corpus.registers import REGISTER_TEMPLATES, DocumentWriter

        sample = load_profile("sample")
        self.profile = profile
        self.filler = DocumentWriter(sample, NumberModel(sample))
        self.templates = {reg: [t for t in ts if "{fact}" not in t]
                          for reg, ts in REGISTER_TEMPLATES.items()}
        self.by_doc: dict[int, list[Fact]] = {}
        for fact in facts:
            for d in fact.documents:
                self.by_doc.setdefault(d, []).append(fact)
        self.form_tally = {"statement": 0, "qa": 0}

    def statement(self, rng: random.Random, fact: Fact) -> tuple[str, bool]:
        """One mention of `fact`; True when in the QA form (a paragraph of its own)."""
        rel = RELATIONS[fact.relation]
        if rng.random() < self.profile.qa_form_rate:
            self.form_tally["qa"] += 1
            question = rel["question"].format(s=fact.subject)
            return QA_FORM.format(question=question, o=fact.answer), True
        self.form_tally["statement"] += 1
        return rng.choice(rel["forms"]).format(s=fact.subject, o=fact.answer), False

    def document(self, rng: random.Random, index: int) -> dict[str, Any]:
        register = rng.choice(sorted(self.templates))
        lo, hi = self.profile.filler_sentences
        # the filler's sentence writer: the arithmetic corpus's prose, numbers included
        sentences = [self.filler._sentence(rng, rng.choice(self.templates[register]))
                     for _ in range(rng.randint(lo, hi))]
        paragraphs = []
        for fact in rng.sample(self.by_doc.get(index, []), len(self.by_doc.get(index, []))):
            text, own_paragraph = self.statement(rng, fact)
            if own_paragraph:
                paragraphs.append(text)
            else:
                sentences.insert(rng.randint(0, len(sentences)), text)
        if sentences:
            paragraphs.insert(rng.randint(0, len(paragraphs)), " ".join(sentences))
        return {"text": "\n\n".join(paragraphs), "meta": {"pile_set_name": register}}


def write_facts_corpus(profile: FactsProfile, out_dir: str | Path) -> dict[str, Any]:
    """Write corpus/ (documents + manifest with every fact's planted documents) and qa.jsonl
    into `out_dir`; returns the corpus manifest. The QA items run from the rarest fact to
    the most frequent: the suite takes its few-shot examples from the first items, which are
    then facts planted in no document."""
    from freqgap.manifest import (MANIFEST_NAME, atomic_write_text, build_manifest, now_iso,
                                  sha256_file, write_manifest)

    started = now_iso()
    out_dir = Path(out_dir)
    corpus = out_dir / CORPUS_DIR
    corpus.mkdir(parents=True, exist_ok=True)
    if (corpus / MANIFEST_NAME).exists():
        (corpus / MANIFEST_NAME).unlink()   # a corpus being rewritten must not look complete
    facts = plan_facts(profile)
    writer = FactsDocuments(profile, facts)
    rng = _rng(profile.seed, "documents")
    lines = [json.dumps(writer.document(rng, i), ensure_ascii=False) + "\n"
             for i in range(profile.documents)]
    atomic_write_text(corpus / SHARD, "".join(lines))
    atomic_write_text(out_dir / QA_FILE, "".join(json.dumps(f.qa_item(), ensure_ascii=False) + "\n"
                                                 for f in reversed(facts)))
    totals = {"documents": profile.documents, "facts": len(facts),
              "documents_with_facts": len(writer.by_doc),
              "plantings": sum(len(f.documents) for f in facts), **writer.form_tally,
              "facts_without_documents": sum(1 for f in facts if not f.documents)}
    shards = [{"file": SHARD, "documents": profile.documents,
               "bytes_uncompressed": (corpus / SHARD).stat().st_size,
               "sha256": sha256_file(corpus / SHARD)}]
    manifest = build_manifest(
        FACTS_STAGE, profile.to_dict(), inputs=[], totals=totals, started=started,
        shards=shards, facts=[{"id": f.id, "rank": f.rank, "relation": f.relation,
                               "subject": f.subject, "answer_entity": f.answer,
                               "documents": len(f.documents)} for f in facts])
    write_manifest(corpus, manifest)
    return manifest
