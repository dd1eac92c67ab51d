"""Quantifier comprehension: surprisal of a critical word after most-type and few-type quantifiers.

Stimuli (after Urbach & Kutas 2010, as used by Michaelov & Bergen 2022 and Gupta 2023): a
sentence frame with a quantifier slot, a quantifier ("Most" / "Few"), and a typical or
atypical critical word ("crops" / "worms"). The frame is a `template` over the row's own
columns, default `{quantifier} {backbone}` ("Most farmers grow"); adverbial quantifiers
use e.g. `{subject} {quantifier} {verb}` ("Farmers often grow"). An optional `context`
(text before the quantified sentence: "Alex was an unusual toddler.") is put in front with
one space. Scored text = [context + " "] + the filled template, then " " + the critical word.

No-quantifier control, per template: the template with its `{quantifier}` slot and one
space next to it removed ("{backbone}", "{subject} {verb}"), filled from the same row;
when the slot opened the template, the first letter is capitalised ("Farmers grow").

Surprisal is -log2 p (bits) of the critical word's subword tokens given the preceding text,
summed over the subwords (`sum`) or averaged per subword (`mean`). Metrics:
- earlier accuracy (per quantifier): most-type: S(typical) < S(atypical); few-type: the reverse.
- Experiment 1 (one word, most vs few): typical: S(word|most) < S(word|few); atypical: reverse.
- Experiment 2 (one word, quantified vs bare): the quantifier moves S the right way:
  down for (most, typical) and (few, atypical), up for (most, atypical) and (few, typical).
- control: the earlier comparison without a quantifier, S(typical|bare) < S(atypical|bare).
  If a model ignored quantifiers, most-type accuracy would equal the control and few-type
  accuracy 1 - control: the earlier metric then measures typicality, not comprehension.
Comparisons pair stimuli of one *frame* (same context, template and other columns).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path

from freqgap.suites.io import SuiteDataError, iter_csv

FIELDS = ("quantifier", "quantifier_type", "critical_word", "typicality")
OPTIONAL = ("context", "template")
DEFAULT_TEMPLATE = "{quantifier} {backbone}"
QTYPES = ("most", "few")
TYPICALITY = ("typical", "atypical")
SLOT = "{quantifier}"


def template_fields(template: str) -> list[str]:
    """The column names a template fills ({quantifier} included), in order."""
    try:
        return [name for _, name, spec, conv in string.Formatter().parse(template)
                if name is not None]
    except ValueError as exc:
        raise SuiteDataError(f"template {template!r}: {exc}") from None


def bare_template(template: str) -> str:
    """The template without its quantifier slot and one adjacent space (the control)."""
    if f"{SLOT} " in template:
        return template.replace(f"{SLOT} ", "", 1)
    if f" {SLOT}" in template:
        return template.replace(f" {SLOT}", "", 1)
    return template.replace(SLOT, "", 1)


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Stimulus:
    """One CSV row: a quantified sentence's parts."""

    line: int
    backbone: str          # the frame without quantifier, as written (the template filled
    quantifier: str        # without its slot; the default layout's backbone column)
    quantifier_type: str
    critical_word: str
    typicality: str
    preamble: str = ""     # the CSV `context` column: text before the quantified sentence
    template: str = DEFAULT_TEMPLATE
    slots: tuple[tuple[str, str], ...] = field(default=())  # the template's other columns

    def _fill(self, template: str) -> str:
        return template.format(quantifier=self.quantifier, **dict(self.slots))

    def _join(self, sentence: str) -> str:
        return f"{self.preamble} {sentence}" if self.preamble else sentence

    @property
    def context(self) -> str:
        """Everything before the critical word: [preamble + " "] + the quantified frame."""
        return self._join(self._fill(self.template))

    @property
    def bare_context(self) -> str:
        """The no-quantifier control of the same row (module rule)."""
        return self._join(bare_sentence(self.template, dict(self.slots)))

    @property
    def frame(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """What stimuli must share to be compared: context, template, other columns."""
        return (self.preamble, self.template, self.slots)


def bare_sentence(template: str, slots: dict[str, str]) -> str:
    """The control sentence of a template and its filled columns."""
    text = bare_template(template).format(**slots)
    return capitalise(text) if template.startswith(SLOT) else text


def bare(backbone: str) -> str:
    """The default layout's control: the backbone with its first letter capitalised."""
    return bare_sentence(DEFAULT_TEMPLATE, {"backbone": backbone})


def _template_of(row: dict[str, str], path: str | Path, lineno: int) -> tuple[str, list[str]]:
    template = row.get("template") or DEFAULT_TEMPLATE
    names = template_fields(template)
    if names.count("quantifier") != 1:
        raise SuiteDataError(f"{path}:{lineno}: template {template!r} must contain "
                             "{quantifier} exactly once")
    others = [n for n in names if n != "quantifier"]
    bad = [n for n in others if not n.isidentifier() or n in FIELDS + OPTIONAL]
    if bad or not others:
        raise SuiteDataError(f"{path}:{lineno}: template {template!r} must fill the quantifier "
                             "and at least one other column (not "
                             f"{', '.join(FIELDS + OPTIONAL)})")
    missing = [n for n in others if not row.get(n)]
    if missing:
        raise SuiteDataError(f"{path}:{lineno}: template {template!r} needs column(s) "
                             f"{', '.join(missing)}, empty or absent in this row")
    return template, others


def load(path: str | Path) -> list[Stimulus]:
    """Read the stimuli CSV: header quantifier, quantifier_type, critical_word, typicality,
    the columns the template fills (default: backbone), optionally context and template."""
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
        if "template" not in row and "backbone" not in row:
            raise SuiteDataError(f"{path}:1: header lacks field(s) backbone (or a template "
                                 "column naming the frame's columns)")
        template, others = _template_of(row, path, lineno)
        slots = tuple((n, row[n]) for n in dict.fromkeys(others))
        out.append(Stimulus(lineno, bare_template(template).format(**dict(slots)),
                            row["quantifier"], qtype, row["critical_word"], typ,
                            preamble=row.get("context", ""), template=template, slots=slots))
    if not out:
        raise SuiteDataError(f"{path}: no stimuli")
    return out


Key = tuple[str, str]  # (context, critical word)


@dataclass(frozen=True)
class Comparison:
    """One binary judgement: correct when S(`low`) < S(`high`), as the metric expects."""

    metric: str            # earlier | exp1 | exp2 | control
    backbone: str          # the frame without quantifier (terms: its first content word)
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
    exp1, exp2); they depend on the stimuli only, so instance ids are stable across models.
    Stimuli are compared within one frame (Stimulus.frame)."""
    out: list[Comparison] = []
    by_bq: dict[tuple, dict[str, Stimulus]] = {}
    by_bw: dict[tuple, dict[str, list[Stimulus]]] = {}
    for s in stimuli:
        by_bq.setdefault((s.frame, s.quantifier, s.quantifier_type), {})[s.typicality] = s
        by_bw.setdefault((s.frame, s.critical_word), {}).setdefault(s.quantifier_type, []).append(s)
    bare_pairs: dict[tuple, tuple[Stimulus, str, str]] = {}
    for (frame, q, qtype), cell in by_bq.items():
        if set(cell) != set(TYPICALITY):
            continue
        t, a = cell["typical"].critical_word, cell["atypical"].critical_word
        kt, ka = (cell["typical"].context, t), (cell["atypical"].context, a)
        low, high, lc, hc = (kt, ka, t, a) if qtype == "most" else (ka, kt, a, t)
        backbone = cell["typical"].backbone
        out.append(Comparison("earlier", backbone, q, qtype, f"{t}|{a}", "", low, high, lc, hc))
        bare_pairs.setdefault(frame, (cell["typical"], t, a))
    for stim, t, a in bare_pairs.values():
        ctx = stim.bare_context
        out.append(Comparison("control", stim.backbone, "", "", f"{t}|{a}", "",
                              (ctx, t), (ctx, a), t, a))
    for (_, word), by_type in by_bw.items():
        for m in by_type.get("most", []):
            for f in by_type.get("few", []):
                km, kf = (m.context, word), (f.context, word)
                low, high, lc, hc = ((km, kf, "most", "few") if m.typicality == "typical"
                                     else (kf, km, "few", "most"))
                out.append(Comparison("exp1", m.backbone, f"{m.quantifier}|{f.quantifier}", "",
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
