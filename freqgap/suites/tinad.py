""""This is not a Dataset" (García-Ferrero et al., EMNLP 2023): loader, prompt and scorer.

The scorer reproduces every metric of the authors' `evaluate.py` from a predictions file
(the dataset's JSON Lines plus a boolean `prediction`), in a JSON of the same shape:
accuracy buckets, the negation analysis, coherence over `test_id` groups (with the Antonymy
patterns' flipped expectations), and the same per pattern. Rounding (two decimals of a
percentage) and the value 0 for empty buckets follow the original.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Any, Iterable

from freqgap.suites.io import SuiteDataError, as_bool, as_text, iter_jsonl, require

FIELDS = ("pattern_id", "pattern", "test_id", "negation_type", "semantic_type",
          "syntactic_scope", "isDistractor", "label", "sentence")
# The eleven patterns, in the order of the authors' scorer output.
PATTERNS = ("Synonymy1", "Antonymy1", "Synonymy2", "Antonymy2", "Hypernymy", "Part",
            "Substance", "Member", "Agent", "Instrument", "Result")
# pattern_id of the Antonymy patterns: their true sentences are the negated input ones.
ANTONYMY_IDS = (2, 4)
BUCKETS = ("TP", "FP", "FN", "TN")
COHERENCE_KEYS = ("All", "Affirmation-Negation_Input", "Affirmation-Negation_Distractor",
                  "Input-Distractor_Affirmation", "Input-Distractor_Negation")
PROMPT = "Is the following statement True or False? {sentence}"


@dataclass(frozen=True)
class Sentence:
    """One dataset line; `prediction` is set only in predictions files."""

    line: int
    pattern_id: int
    pattern: str
    test_id: Any
    negation_type: str
    semantic_type: str
    syntactic_scope: str
    is_distractor: bool
    label: bool
    sentence: str
    prediction: bool | None = None

    @property
    def affirmative(self) -> bool:
        return self.negation_type == "affirmation"


TEXT_FIELDS = ("pattern", "negation_type", "semantic_type", "syntactic_scope", "sentence")


def load(path: str | Path, with_predictions: bool = False) -> list[Sentence]:
    """Read the dataset's JSON Lines (or a predictions file when `with_predictions`).
    Text fields must be JSON strings and `test_id` an integer or a string: a null or a
    number where a sentence belongs is a broken file, not the sentence "None"."""
    fields = FIELDS + (("prediction",) if with_predictions else ())
    out = []
    for lineno, obj in iter_jsonl(path):
        require(obj, fields, path, lineno)
        text = {name: as_text(obj, name, path, lineno) for name in TEXT_FIELDS}
        if text["pattern"] not in PATTERNS:
            raise SuiteDataError(f"{path}:{lineno}: unknown pattern {obj['pattern']!r} "
                                 f"(known: {', '.join(PATTERNS)})")
        pattern_id = obj["pattern_id"]
        if isinstance(pattern_id, str) and pattern_id.strip().isdigit():
            pattern_id = int(pattern_id)
        if isinstance(pattern_id, bool) or not isinstance(pattern_id, int):
            raise SuiteDataError(f"{path}:{lineno}: pattern_id {obj['pattern_id']!r} "
                                 "is not an integer")
        test_id = obj["test_id"]
        if isinstance(test_id, bool) or not isinstance(test_id, (int, str)):
            raise SuiteDataError(f"{path}:{lineno}: field 'test_id' is {test_id!r}, not an "
                                 "integer or a string")
        out.append(Sentence(
            line=lineno, pattern_id=pattern_id, pattern=text["pattern"], test_id=test_id,
            negation_type=text["negation_type"], semantic_type=text["semantic_type"],
            syntactic_scope=text["syntactic_scope"],
            is_distractor=as_bool(obj["isDistractor"], "isDistractor", path, lineno),
            label=as_bool(obj["label"], "label", path, lineno), sentence=text["sentence"],
            prediction=(as_bool(obj["prediction"], "prediction", path, lineno)
                        if with_predictions else None)))
    if not out:
        raise SuiteDataError(f"{path}: no sentences")
    return out


def first_groups(rows: list[Sentence], n_groups: int | None) -> list[Sentence]:
    """The sentences of the first `n_groups` test_id groups (in order of first appearance),
    whole, in file order: a limit never cuts a coherence group."""
    if n_groups is None:
        return rows
    keep: dict[Any, None] = {}
    for r in rows:
        if r.test_id not in keep:
            if len(keep) == n_groups:
                continue
            keep[r.test_id] = None
    return [r for r in rows if r.test_id in keep]


def check_groups(rows: list[Sentence], path: str | Path) -> None:
    """Every test_id group has the four cells the coherence tests compare (checked before
    any model runs, so an incomplete group fails fast and leaves nothing behind)."""
    try:
        coherence_scores([dataclass_replace(r, prediction=r.label) for r in rows])
    except SuiteDataError as exc:
        raise SuiteDataError(f"{path}: {exc}") from None


def prompt(sentence: str) -> str:
    """The authors' zero-shot prompt for base (non-chat) models; the answer is the next token."""
    return PROMPT.format(sentence=sentence.strip())


# ---------------------------------------------------------------------------- accuracy
def _confusion() -> dict[str, int]:
    return {k: 0 for k in BUCKETS}


def _bucket(gold: bool, pred: bool) -> str:
    if gold == pred:
        return "TP" if gold else "TN"
    return "FN" if gold else "FP"


def _accuracy(c: dict[str, int]) -> float:
    n = sum(c[k] for k in BUCKETS)
    return round((c["TP"] + c["TN"]) / n * 100, 2) if n > 0 else 0


def accuracy_scores(rows: Iterable[Sentence]) -> dict[str, Any]:
    """all / all_affirmations / all_negations / input_* / distractor_* and Negation_analysis.

    Negation_analysis has `<type>_all`, `<type>_input`, `<type>_distractor` for every
    negation type, semantic type and syntactic scope seen (lower-cased, stripped) other
    than `affirmation` and `none`.
    """
    res: dict[str, Any] = OrderedDict()
    for r in rows:
        if r.prediction is None:
            raise SuiteDataError(f"line {r.line}: no prediction to score")
        b = _bucket(r.label, r.prediction)
        polarity = "affirmation" if r.affirmative else "negation"
        place = "distractor" if r.is_distractor else "input"
        for key in (f"all_{polarity}s", f"{place}_{polarity}", "all"):
            res.setdefault(key, _confusion())[b] += 1
        analysis = res.setdefault("Negation_analysis", OrderedDict())
        for kind in (r.negation_type, r.semantic_type, r.syntactic_scope):
            kind = kind.strip().lower()
            if kind in ("affirmation", "none"):
                continue
            for suffix in ("all", "input", "distractor"):
                analysis.setdefault(f"{kind}_{suffix}", _confusion())
            analysis[f"{kind}_all"][b] += 1
            analysis[f"{kind}_{place}"][b] += 1
    for key, c in res.items():
        if key != "Negation_analysis":
            c["accuracy"] = _accuracy(c)
    if "Negation_analysis" in res:
        analysis = res.pop("Negation_analysis")
        for c in analysis.values():
            c["accuracy"] = _accuracy(c)
        res["Negation_analysis"] = analysis
    return res


# ---------------------------------------------------------------------------- coherence
def _expected_pair(antonymy: bool, r: Sentence) -> bool:
    """Whether a sentence takes part in the coherence test of its group.

    Each group (test_id) holds the four sentences of one concept pair in the released data:
    affirmative/negated x input/distractor, with both labels. The test keeps one per cell:
    input affirmations that are true and input negations that are false (flipped for the
    Antonymy patterns, whose true input sentence is the negated one), distractor
    affirmations that are false and distractor negations that are true.
    """
    if r.is_distractor:
        return r.label is (not r.affirmative)
    return r.label is (r.affirmative != antonymy)


def _coherent_cells(a: list[bool], b: list[bool], differ: bool, test_id: Any,
                    names: tuple[str, str]) -> bool:
    """Both cells answered uniformly, and their answers differ (or agree when not `differ`).
    An empty cell is an incomplete group, whatever the other cell holds."""
    if not a or not b:
        missing = names[0] if not a else names[1]
        raise SuiteDataError(f"test_id {test_id!r}: no {missing} sentence for the coherence "
                             "test (the group is incomplete)")
    if len(set(a)) > 1 or len(set(b)) > 1:
        return False
    return (a[0] != b[0]) if differ else (a[0] == b[0])


def coherence_scores(rows: Iterable[Sentence]) -> dict[str, Any]:
    """Coherent/Incoherent counts and percentage per coherence test, grouped by `test_id`.

    `All` is coherent when both affirmation-negation tests are and the group's predictions
    are all correct or all wrong (over every sentence of the group, kept or not).
    For Antonymy groups the input-distractor tests ask for equal answers, otherwise different.
    """
    groups: dict[Any, list[Sentence]] = OrderedDict()
    for r in rows:
        groups.setdefault(r.test_id, []).append(r)
    res = OrderedDict((k, {"Coherent": 0, "Incoherent": 0}) for k in COHERENCE_KEYS)

    def tally(key: str, ok: bool) -> None:
        res[key]["Coherent" if ok else "Incoherent"] += 1

    for test_id, group in groups.items():
        antonymy = group[0].pattern_id in ANTONYMY_IDS
        cells: dict[tuple[bool, bool], list[bool]] = {(d, a): [] for d in (False, True)
                                                       for a in (False, True)}
        for r in group:
            if _expected_pair(antonymy, r):
                cells[(r.is_distractor, r.affirmative)].append(r.prediction)
        aff_in, neg_in = cells[(False, True)], cells[(False, False)]
        aff_d, neg_d = cells[(True, True)], cells[(True, False)]
        input_ok = _coherent_cells(aff_in, neg_in, True, test_id,
                                   ("input affirmation", "input negation"))
        distractor_ok = _coherent_cells(aff_d, neg_d, True, test_id,
                                        ("distractor affirmation", "distractor negation"))
        tally("Affirmation-Negation_Input", input_ok)
        tally("Affirmation-Negation_Distractor", distractor_ok)
        correct = [r.label == r.prediction for r in group]
        tally("All", input_ok and distractor_ok and (all(correct) or not any(correct)))
        differ = not antonymy
        tally("Input-Distractor_Affirmation",
              _coherent_cells(aff_in, aff_d, differ, test_id,
                              ("input affirmation", "distractor affirmation")))
        tally("Input-Distractor_Negation",
              _coherent_cells(neg_in, neg_d, differ, test_id,
                              ("input negation", "distractor negation")))
    for c in res.values():
        n = c["Coherent"] + c["Incoherent"]
        c["Coherence_percentage"] = round(c["Coherent"] / n * 100, 2) if n > 0 else 0
    return res


def score(rows: list[Sentence]) -> dict[str, Any]:
    """The authors' full scores JSON: overall metrics, coherence, then each pattern's."""
    out = accuracy_scores(rows)
    out["coherence_scores"] = coherence_scores(rows)
    for pattern in PATTERNS:
        subset = [r for r in rows if r.pattern == pattern]
        out[pattern] = accuracy_scores(subset)
        out[pattern]["coherence_scores"] = coherence_scores(subset)
    return out


def score_file(path: str | Path) -> dict[str, Any]:
    """Score a predictions file in the authors' format; an incomplete test_id group is
    refused, as before a model run (check_groups), not scored as a smaller one."""
    rows = load(path, with_predictions=True)
    check_groups(rows, path)
    return score(rows)
