"""Task registry from conf/tasks.yaml: templates, answer functions, operand rules, grids.

Tasks are data, not code, so a user adds a task (another template, operator or unit pair)
by editing configuration; this module validates an entry and says which key is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from freqgap.config import ConfigError, load_conf

CONF_NAME = "tasks"

# y as a function of (x1, x2, x3); x2 is an int for binary tasks, x3 for unit tasks.
ANSWERS: dict[str, Callable[[int, Any, int | None], int]] = {
    "add": lambda x1, x2, x3: x1 + x2,
    "sub": lambda x1, x2, x3: x1 - x2,
    "mul": lambda x1, x2, x3: x1 * x2,
    "mul_x3": lambda x1, x2, x3: x1 * x3,
}
KINDS = ("binary", "unit")
SLOTS = ("x1", "x2", "x3", "y")


@dataclass(frozen=True)
class OperandRule:
    """How x1 is selected from the counts."""

    name: str
    source: str          # unigrams | pairs
    top: int
    max_digits: int


@dataclass(frozen=True)
class Task:
    """One task of SPEC §3."""

    name: str
    kind: str                       # binary (x2 in a range) | unit (x2 = unit word)
    question: str                   # template with {x1} {x2} {unit} {target}
    answer: str                     # key of ANSWERS
    rule: OperandRule
    freq_defs: dict[str, tuple[str, ...]]
    x2_range: tuple[int, int] | None = None
    unit: str | None = None
    target: str | None = None
    multiplier: int | None = None

    def y(self, x1: int, x2: Any, x3: int | None) -> int:
        return ANSWERS[self.answer](x1, x2, x3)

    def question_text(self, x1: int, x2: Any) -> str:
        return self.question.format(x1=x1, x2=x2, unit=self.unit, target=self.target)


@dataclass(frozen=True)
class Grid:
    """Which (task, k, seed) combinations to write."""

    tasks: tuple[str, ...]
    ks: tuple[int, ...]
    seeds: tuple[int, ...]
    max_test_items: int | None = None
    zero_shot_first_seed_only: bool = True

    def seeds_for(self, k: int) -> tuple[int, ...]:
        """The seeds of k shots: the first one only for k = 0 when zero-shot prompts do not
        depend on the seed (zero_shot_first_seed_only)."""
        return self.seeds[:1] if (k == 0 and self.zero_shot_first_seed_only) else self.seeds


def _err(where: str, msg: str) -> ConfigError:
    return ConfigError(f"conf/{CONF_NAME}.yaml: {where}: {msg}")


def parse_tasks(conf: dict[str, Any]) -> dict[str, Task]:
    """All tasks of a loaded tasks config, validated."""
    rules_conf = conf.get("operand_rules") or {}
    rules = {}
    for name, r in rules_conf.items():
        if r.get("source") not in ("unigrams", "pairs"):
            raise _err(f"operand_rules.{name}.source", "must be unigrams or pairs")
        rules[name] = OperandRule(name, r["source"], int(r["top"]), int(r["max_digits"]))
    defs_conf = conf.get("freq_defs") or {}
    tasks: dict[str, Task] = {}
    for name, t in (conf.get("tasks") or {}).items():
        where = f"tasks.{name}"
        for key in ("kind", "question", "answer", "x1", "freq_defs"):
            if key not in t:
                raise _err(where, f"missing key {key!r}")
        if t["kind"] not in KINDS:
            raise _err(where, f"kind {t['kind']!r} is not one of {', '.join(KINDS)}")
        if t["answer"] not in ANSWERS:
            raise _err(where, f"answer {t['answer']!r} is not one of {', '.join(ANSWERS)}")
        if t["x1"] not in rules:
            raise _err(where, f"x1 rule {t['x1']!r} is not in operand_rules ({', '.join(rules)})")
        if t["freq_defs"] not in defs_conf:
            raise _err(where, f"freq_defs {t['freq_defs']!r} is not in freq_defs")
        fdefs = {str(k): tuple(v) for k, v in defs_conf[t["freq_defs"]].items()}
        for fname, slots in fdefs.items():
            bad = [s for s in slots if s not in SLOTS] or ([] if 1 <= len(slots) <= 3 else ["count"])
            if bad:
                raise _err(f"freq_defs.{t['freq_defs']}.{fname}", "1 to 3 slots among x1 x2 x3 y")
        kw: dict[str, Any] = {}
        if t["kind"] == "binary":
            lo_hi = t.get("x2_range")
            if not (isinstance(lo_hi, list) and len(lo_hi) == 2 and lo_hi[0] <= lo_hi[1]):
                raise _err(where, "binary tasks need x2_range: [low, high]")
            kw["x2_range"] = (int(lo_hi[0]), int(lo_hi[1]))
            if rules[t["x1"]].source != "unigrams":
                raise _err(where, "binary tasks take x1 from a unigrams rule")
        else:
            for key in ("unit", "target", "multiplier"):
                if key not in t:
                    raise _err(where, f"unit tasks need {key!r}")
            if rules[t["x1"]].source != "pairs":
                raise _err(where, "unit tasks take x1 from a pairs rule")
            kw.update(unit=str(t["unit"]), target=str(t["target"]), multiplier=int(t["multiplier"]))
        try:
            t["question"].format(x1=1, x2=2, unit="u", target="t")
        except (KeyError, IndexError, ValueError) as exc:
            raise _err(where, f"bad question template {t['question']!r}: {exc}") from exc
        tasks[name] = Task(name=name, kind=t["kind"], question=t["question"], answer=t["answer"],
                           rule=rules[t["x1"]], freq_defs=fdefs, **kw)
    if not tasks:
        raise _err("tasks", "no tasks defined")
    return tasks


def load_tasks(conf: dict[str, Any] | None = None) -> dict[str, Task]:
    """Tasks from conf/tasks.yaml (or an already-loaded mapping)."""
    return parse_tasks(load_conf(CONF_NAME) if conf is None else conf)


def _once(where: str, values) -> None:
    """Refuse a value given twice: every prompt of it would be written (and predicted,
    and weighted in Δ) twice."""
    seen = set()
    for v in values:
        if v in seen:
            raise ConfigError(f"{where}: {v!r} given twice; give each value once")
        seen.add(v)


def resolve_grid(conf: dict[str, Any], profile: str = "paper", *, tasks: list[str] | None = None,
                 ks: list[int] | None = None, seeds: list[int] | None = None,
                 max_test_items: int | None = None) -> Grid:
    """A named grid of conf/tasks.yaml with command-line overrides applied."""
    grids = conf.get("grids") or {}
    if profile not in grids:
        raise _err("grids", f"no grid {profile!r}; known: {', '.join(grids)}")
    g = grids[profile]
    known = list((conf.get("tasks") or {}).keys())
    names = tasks if tasks is not None else (known if g.get("tasks") == "all" else list(g["tasks"]))
    unknown = [t for t in names if t not in known]
    if unknown:
        raise _err("tasks", f"unknown task(s) {', '.join(unknown)}; known: {', '.join(known)}")
    ks_ = tuple(int(k) for k in (ks if ks is not None else g["ks"]))
    if any(k < 0 for k in ks_):
        raise _err(f"grids.{profile}.ks", "k must be >= 0")
    cap = max_test_items if max_test_items is not None else g.get("max_test_items")
    seeds_ = tuple(int(s) for s in (seeds if seeds is not None else g["seeds"]))
    for flag, given, field, values in (("--tasks", tasks, "tasks", names),
                                       ("--k", ks, "ks", ks_), ("--seeds", seeds, "seeds", seeds_)):
        _once(flag if given is not None else f"conf/{CONF_NAME}.yaml: grids.{profile}.{field}",
              values)
    return Grid(tasks=tuple(names), ks=ks_, seeds=seeds_,
                max_test_items=None if cap is None else int(cap),
                zero_shot_first_seed_only=bool(conf.get("zero_shot_first_seed_only", True)))
