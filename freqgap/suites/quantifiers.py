"""Quantifier comprehension: surprisal of a critical word after most-type and few-type quantifiers.

Stimuli (after Urbach & Kutas 2010, as used by Michaelov & Bergen 2022 and Gupta 2023): a
backbone phrase ("farmers grow"), a quantifier ("Most" / "Few"), and a typical or atypical
critical word ("crops" / "worms"). Sentence = "{quantifier} {backbone} {word}"; the bare
control drops the quantifier and capitalises the backbone.

Surprisal is -log2 p (bits) of the critical word's subword tokens given the preceding text,
summed over the subwords (`sum`) or averaged per subword (`mean`). Metrics:
- earlier accuracy (per quantifier): most-type: S(typical) < S(atypical); few-type: the reverse.
- Experiment 1 (one word, most vs few): typical: S(word|most) < S(word|few); atypical: reverse.
- Experiment 2 (one word, quantified vs bare): the quantifier moves S the right way:
  down for (most, typical) and (few, atypical), up for (most, atypical) and (few, typical).
- control: the earlier comparison without a quantifier, S(typical|bare) < S(atypical|bare).
  If a model ignored quantifiers, most-type accuracy would equal the control and few-type
  accuracy 1 - control: the earlier metric then measures typicality, not comprehension.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from freqgap.suites.io import SuiteDataError, iter_csv

FIELDS = ("backbone", "quantifier", "quantifier_type", "critical_word", "typicality")
QTYPES = ("most", "few")
TYPICALITY = ("typical", "atypical")


@dataclass(frozen=True)
class Stimulus:
    """One CSV row: a quantified sentence's parts."""

    line: int
    backbone: str
    quantifier: str
    quantifier_type: str
    critical_word: str
    typicality: str

    @property
    def context(self) -> str:
        return f"{self.quantifier} {self.backbone}"

    @property
    def bare_context(self) -> str:
        return bare(self.backbone)


def bare(backbone: str) -> str:
    """The backbone as a sentence start without a quantifier (first letter capitalised)."""
    return backbone[:1].upper() + backbone[1:]


def load(path: str | Path) -> list[Stimulus]:
    """Read the stimuli CSV (header: backbone, quantifier, quantifier_type, critical_word, typicality)."""
    out = []
    for lineno, row in iter_csv(path, FIELDS):
        qtype, typ = row["quantifier_type"].lower(), row["typicality"].lower()
        if qtype not in QTYPES:
            raise SuiteDataError(f"{path}:{lineno}: quantifier_type {row['quantifier_type']!r} "
                                 "is not most or few")
        if typ not in TYPICALITY:
            raise SuiteDataError(f"{path}:{lineno}: typicality {row['typicality']!r} "
                                 "is not typical or atypical")
        if any(c.isspace() for c in row["critical_word"]):
            raise SuiteDataError(f"{path}:{lineno}: critical_word {row['critical_word']!r} "
                                 "must be one word")
        out.append(Stimulus(lineno, row["backbone"], row["quantifier"], qtype,
                            row["critical_word"], typ))
    if not out:
        raise SuiteDataError(f"{path}: no stimuli")
    return out


Key = tuple[str, str]  # (context, critical word)


@dataclass(frozen=True)
class Comparison:
    """One binary judgement: correct when S(`low`) < S(`high`), as the metric expects."""

    metric: str            # earlier | exp1 | exp2 | control
    backbone: str
    quantifier: str        # the quantifier (exp1: "most-q|few-q"; control: "")
    quantifier_type: str   # most | few | "" (exp1, control)
    word: str              # the critical word (earlier, control: "typical|atypical")
    typicality: str        # typical | atypical | "" (earlier, control)
    low: Key               # the (context, word) whose surprisal should be the lower
    high: Key
    low_choice: str        # what the model prefers when S(low) < S(high)
    high_choice: str       # ... and otherwise

    @property
    def sentence(self) -> str:
        return f"{self.low[0]} {self.low[1]} / {self.high[0]} {self.high[1]}"

    def judge(self, surprisal: dict[Key, float]) -> tuple[bool, str]:
        """(correct, the model's choice) under the given surprisals."""
        ok = surprisal[self.low] < surprisal[self.high]
        return ok, self.low_choice if ok else self.high_choice


def plan(stimuli: list[Stimulus]) -> list[Comparison]:
    """All comparisons of the four metrics, in a deterministic order (earlier, control,
    exp1, exp2); they depend on the stimuli only, so instance ids are stable across models."""
    out: list[Comparison] = []
    by_bq: dict[tuple[str, str, str], dict[str, Stimulus]] = {}
    by_bw: dict[tuple[str, str], dict[str, list[Stimulus]]] = {}
    for s in stimuli:
        by_bq.setdefault((s.backbone, s.quantifier, s.quantifier_type), {})[s.typicality] = s
        by_bw.setdefault((s.backbone, s.critical_word), {}).setdefault(s.quantifier_type, []).append(s)
    bare_pairs: dict[str, tuple[str, str]] = {}
    for (backbone, q, qtype), cell in by_bq.items():
        if set(cell) != set(TYPICALITY):
            continue
        t, a = cell["typical"].critical_word, cell["atypical"].critical_word
        kt, ka = (cell["typical"].context, t), (cell["atypical"].context, a)
        low, high, lc, hc = (kt, ka, t, a) if qtype == "most" else (ka, kt, a, t)
        out.append(Comparison("earlier", backbone, q, qtype, f"{t}|{a}", "", low, high, lc, hc))
        bare_pairs.setdefault(backbone, (t, a))
    for backbone, (t, a) in bare_pairs.items():
        out.append(Comparison("control", backbone, "", "", f"{t}|{a}", "",
                              (bare(backbone), t), (bare(backbone), a), t, a))
    for (backbone, word), by_type in by_bw.items():
        for m in by_type.get("most", []):
            for f in by_type.get("few", []):
                km, kf = (m.context, word), (f.context, word)
                low, high, lc, hc = ((km, kf, "most", "few") if m.typicality == "typical"
                                     else (kf, km, "few", "most"))
                out.append(Comparison("exp1", backbone, f"{m.quantifier}|{f.quantifier}", "",
                                      word, m.typicality, low, high, lc, hc))
    for s in stimuli:
        kq, kb = (s.context, s.critical_word), (s.bare_context, s.critical_word)
        down = (s.quantifier_type == "most") == (s.typicality == "typical")
        low, high, lc, hc = ((kq, kb, "quantified", "bare") if down
                             else (kb, kq, "bare", "quantified"))
        out.append(Comparison("exp2", s.backbone, s.quantifier, s.quantifier_type,
                              s.critical_word, s.typicality, low, high, lc, hc))
    return out


def keys_needed(comps: list[Comparison]) -> list[Key]:
    """Every distinct (context, word) whose surprisal the comparisons use, first-seen order."""
    seen: dict[Key, None] = {}
    for c in comps:
        seen.setdefault(c.low, None)
        seen.setdefault(c.high, None)
    return list(seen)


def summarise(comps: list[Comparison], correct: list[bool]) -> dict[str, float | int | None]:
    """Accuracies: earlier (most, few), exp1 (by typicality), exp2 (by quantifier type),
    control, and the quantifier-blind expectations of the earlier metric from the control."""
    def acc(metric: str, **kw: str) -> float | None:
        sel = [ok for c, ok in zip(comps, correct, strict=True)
               if c.metric == metric and all(getattr(c, k) == v for k, v in kw.items())]
        return sum(sel) / len(sel) if sel else None

    out: dict[str, float | int | None] = {
        "earlier_most": acc("earlier", quantifier_type="most"),
        "earlier_few": acc("earlier", quantifier_type="few"),
        "earlier_all": acc("earlier"),
        "exp1": acc("exp1"),
        "exp1_typical": acc("exp1", typicality="typical"),
        "exp1_atypical": acc("exp1", typicality="atypical"),
        "exp2": acc("exp2"),
        "exp2_most": acc("exp2", quantifier_type="most"),
        "exp2_few": acc("exp2", quantifier_type="few"),
        "control": acc("control"),
    }
    ctrl = out["control"]
    out["quantifier_blind_most"] = ctrl
    out["quantifier_blind_few"] = None if ctrl is None else 1.0 - ctrl
    for m in ("earlier", "exp1", "exp2", "control"):
        out[f"n_{m}"] = sum(c.metric == m for c in comps)
    return out
