"""Instances, their term sets and the few-shot prompts of SPEC §3, as Arrow tables.

Shots are drawn per (task, seed) from one seeded generator, so the k=2 shots are the first
two of the k=4 shots and every (task, k, seed) is reproducible from the configuration
alone. A test item whose operand multiset equals a shot's (the shot itself, or its
commuted copy) is left out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Iterator

import pyarrow as pa

from freqgap.contract import DATASETS
from freqgap.errors import UsageError
from freqgap.instances.tasks import Grid, Task

# The shapes of docs/DATA.md, from the one declaration in freqgap/contract.py.
INSTANCE_SCHEMA = DATASETS["instances"].schema()
TERMS_SCHEMA = DATASETS["instance_terms"].schema()
PROMPT_SCHEMA = DATASETS["prompts"].schema()


@dataclass(frozen=True)
class Instance:
    """One question with its operands and answer."""

    task: str
    instance_id: int
    x1: int
    x2: str
    x3: int | None
    y: int
    question: str

    @property
    def answer(self) -> str:
        return str(self.y)

    def operand_key(self) -> tuple[str, ...]:
        """The operand multiset: equal for a question and its commuted copy."""
        return tuple(sorted((str(self.x1), self.x2)))

    def slot(self, name: str) -> str:
        """A term as counted: numbers without leading zeros, unit words as written."""
        value = {"x1": self.x1, "x2": self.x2, "x3": self.x3, "y": self.y}[name]
        return str(int(value)) if isinstance(value, int) or str(value).isdigit() else str(value)


def make_instances(task: Task, x1_values: list[int]) -> list[Instance]:
    """All instances of one task, numbered 0.. in (x1, x2) order."""
    out = []
    if task.kind == "binary":
        lo, hi = task.x2_range
        pairs = [(x1, x2) for x1 in x1_values for x2 in range(lo, hi + 1)]
        for i, (x1, x2) in enumerate(pairs):
            out.append(Instance(task.name, i, x1, str(x2), None, task.y(x1, x2, None),
                                task.question_text(x1, x2)))
    else:
        for i, x1 in enumerate(x1_values):
            out.append(Instance(task.name, i, x1, task.unit, task.multiplier,
                                task.y(x1, task.unit, task.multiplier),
                                task.question_text(x1, task.unit)))
    return out


def instance_terms(task: Task, inst: Instance) -> Iterator[dict[str, Any]]:
    """One row per frequency definition: the term multiset sorted as strings."""
    for fdef, slots in task.freq_defs.items():
        terms = sorted(inst.slot(s) for s in slots)
        padded = terms + [None] * (3 - len(terms))
        yield {"task": inst.task, "instance_id": inst.instance_id, "freq_def": fdef,
               "n_terms": len(terms), "t1": padded[0], "t2": padded[1], "t3": padded[2]}


def shot_text(template: str, inst: Instance) -> str:
    return template.format(question=inst.question, answer=inst.answer)


def seed_rng(task: str, seed: int) -> random.Random:
    """The generator of one (task, seed); string seeding is stable across Python runs."""
    return random.Random(f"freqgap|{task}|{seed}")


def draw_shots(instances: list[Instance], task: str, seed: int, k: int) -> list[Instance]:
    """k shots under the seed, by a partial Fisher-Yates shuffle: the first k of the k+1
    shots are the k shots, whatever the number of instances (nested across k)."""
    if k > len(instances):
        raise UsageError(f"task {task}: k={k} shots requested but the counts give only "
                         f"{len(instances)} instances; use a smaller --k or a larger corpus")
    rng = seed_rng(task, seed)
    pool = list(range(len(instances)))
    for i in range(k):
        j = rng.randrange(i, len(pool))
        pool[i], pool[j] = pool[j], pool[i]
    return [instances[i] for i in pool[:k]]


def test_items(instances: list[Instance], shots: list[Instance], task: str, seed: int,
               k: int, max_test_items: int | None) -> list[Instance]:
    """Every instance whose operand multiset equals no shot's; optionally a random cap."""
    excluded = {s.operand_key() for s in shots}
    items = [i for i in instances if i.operand_key() not in excluded]
    if max_test_items is not None and len(items) > max_test_items:
        rng = random.Random(f"freqgap|{task}|{seed}|{k}|cap")
        items = sorted(rng.sample(items, max_test_items), key=lambda i: i.instance_id)
    return items


def prompt_rows(task: str, instances: list[Instance], grid: Grid, shot_template: str,
                test_template: str) -> Iterator[dict[str, Any]]:
    """Prompt rows of one task over the grid's (k, seed) combinations."""
    for k in grid.ks:
        for seed in grid.seeds_for(k):
            shots = draw_shots(instances, task, seed, k)
            prefix = "".join(shot_text(shot_template, s) for s in shots)
            shot_ids = [s.instance_id for s in shots]
            for inst in test_items(instances, shots, task, seed, k, grid.max_test_items):
                yield {"task": task, "k": k, "seed": seed, "instance_id": inst.instance_id,
                       "shot_ids": shot_ids, "prefix": prefix,
                       "prompt": prefix + test_template.format(question=inst.question),
                       "answer": inst.answer}


def instances_table(instances: list[Instance]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"task": i.task, "instance_id": i.instance_id, "x1": i.x1, "x2": i.x2, "x3": i.x3,
          "y": i.y, "question": i.question, "answer": i.answer} for i in instances],
        schema=INSTANCE_SCHEMA)


def terms_table(task: Task, instances: list[Instance]) -> pa.Table:
    return pa.Table.from_pylist([r for i in instances for r in instance_terms(task, i)],
                                schema=TERMS_SCHEMA)
