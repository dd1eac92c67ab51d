"""The QA suite as a suite of the pipeline: instances keyed by the entity pair, greedy
answers through the model interface, and the check that the counts are document counts.

It goes through the same pipeline as NeQA or TINaD (instances, predictions, summary, the
DuckDB gaps), so Δ, its intervals and the reuse of finished models are those of every
suite; only the key (the pair of entity terms) and ω's unit differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freqgap.counting.rules import DOCUMENT_UNIT, WINDOW_UNIT
from freqgap.errors import InputMismatchError
from freqgap.inference.lm import NEWLINE
from freqgap.manifest import read_manifest
from freqgap.suites import qa_bins, qa_items
from freqgap.suites.qa_items import FREQ_DEF, TASK
from freqgap.suites.runner import Suite
from freqgap.suites.tables import instance_row, prediction_row, term_rows


class QASuite(Suite):
    """Few-shot `Q: … A:` questions; the first `shots` items of the file are the shots."""

    name = "qa"
    headline = ("accuracy",)
    chance = 0.0

    def __init__(self, data: str | Path, conf: dict[str, Any], limit: int | None = None,
                 overlong: str = "refuse") -> None:
        super().__init__(conf, overlong)
        self.path = Path(data)
        self.shots, items = qa_items.split_shots(qa_items.load(data), int(conf.get("shots", 3)),
                                                 data)
        self.items = items[:limit]
        self.max_new_tokens = int(conf.get("max_new_tokens", 16))

    def instances(self) -> tuple[list[dict], list[dict]]:
        inst, trows = [], []
        for i, item in enumerate(self.items):
            inst.append(instance_row(TASK, i, item.question, item.answer))
            trows += term_rows(TASK, i, {FREQ_DEF: item.pair})
        return inst, trows

    def vocabulary(self, trows: list[dict]) -> list[str]:
        """instances/vocab.yaml: the one-word entity terms (numbers are terms already;
        phrases need the term list, entities.txt)."""
        return qa_items.count_vocabulary([t for r in trows for t in (r["t1"], r["t2"]) if t])

    def counts_needed(self, vocab: list[str], term_conf: dict[str, Any]) -> dict[str, Any]:
        """Only the unit: the window and number rules do not change a document count's
        meaning, and the entities are checked by `check_counts` (vocabulary or pair list)."""
        return {"unit": DOCUMENT_UNIT}

    def check_counts(self, counts: str | Path) -> None:
        """The counts must be document counts that hold every item's entities as terms."""
        check_document_counts(Path(counts), self.items, self.path)

    def report(self, out: Path, gaps) -> dict[str, Any]:
        """OUT/qa/: accuracy per log bin of ω and the figure (freqgap.suites.qa_bins)."""
        return qa_bins.write_bins(out, gaps, qa_bins.bin_base(self.conf))

    def evaluate(self, lm) -> tuple[list[dict], list[dict], dict[str, Any]]:
        prompts = [qa_items.prompt(self.shots, it) for it in self.items]
        texts = self.generate(lm, TASK, prompts, self.max_new_tokens, NEWLINE)
        preds, details, right = [], [], 0
        for i, (item, text) in enumerate(zip(self.items, texts, strict=True)):
            ok = qa_items.is_correct(text, item)
            right += ok
            answer = qa_items.first_line(text).strip()
            preds.append(prediction_row(lm.name, lm.revision, TASK, len(self.shots), i, text,
                                        answer, ok))
            details.append({"task": TASK, "instance_id": i, "id": item.key,
                            "relation": item.relation, "subject": item.subject,
                            "answer_entity": item.answer_entity, "gold": item.answer,
                            "answer": answer, "correct": ok})
        return preds, details, {"accuracy": right / len(self.items), "n": len(self.items),
                                "shots": len(self.shots)}


def check_document_counts(counts: Path, items: list[qa_items.Item], path: Path) -> None:
    """Refuse counts whose ω is not the relevant-document count of every item's pair: not
    the document unit, a pair list without some pair, or (without a pair list) an entity
    the counter does not take as a term. One line naming the counts and what to run."""
    config = read_manifest(counts, stage="count_terms").get("config") or {}
    hint = (f"count with --unit document --pairs FILE --terms FILE (`freqgap suite qa --data "
            f"{path} --count-inputs DIR` writes both)")
    unit = config.get("unit", WINDOW_UNIT)
    if unit != DOCUMENT_UNIT:
        raise InputMismatchError(f"{counts}: counted with the {unit} unit, but the QA suite's "
                                 "ω is the number of documents holding both entities; " + hint)
    listed = {tuple(p) for p in config.get("pairs") or []}
    if listed:
        missing = [it for it in items if it.pair not in listed]
        if missing:
            raise InputMismatchError(
                f"{counts}: its pair list lacks {len(missing)} of the items' pairs, e.g. "
                f"{missing[0].pair} ({path}:{missing[0].line}); " + hint)
        return
    listed_only = bool(config.get("listed_only"))
    words = set(config.get("terms") or []) | (set() if listed_only else set(config.get("vocab") or []))
    digits = 0 if listed_only else int(config.get("max_digits", 6))
    for it in items:
        for term in it.pair:
            number = term.isascii() and term.isdigit()
            if (number and len(term) <= digits) or (not number and term in words):
                continue
            raise InputMismatchError(f"{counts}: {term!r} ({path}:{it.line}) is not a term of "
                                     "this count (in neither its term list nor its vocabulary, "
                                     f"or a number of more than {digits} digits); " + hint)
