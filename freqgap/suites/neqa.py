"""NeQA (Zhang et al., 2023): negated two-choice questions, prompts and the task decomposition.

Two released layouts load into the same items: NeQA's own JSON Lines (`question`,
`choices`, `answer`, `metadata`) and the Inverse Scaling Prize form (`prompt`, `classes`,
`answer_index`), whose last `Question: ... A. ... B. ... Answer:` block is parsed back
into a question and two choices. Prompts are the authors' MMLU-style ones; the answer is
whichever of ` A` / ` B` is more probable as the first generated token, or, for
chain-of-thought, the letter in "So the answer is X." in the first paragraph.

Decomposition: Task 1 is answering the non-negated questions (accuracy t1); Task 2 is
telling a sentence from its negation (accuracy s2). A model that answers the negated
question by answering the original one and flipping the answer exactly when it sees the
two differ gets t1*s2 + (1 - t1)*(1 - s2): the composed accuracy.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freqgap.suites.io import SuiteDataError, iter_jsonl, require

LETTERS = ("A", "B")
HEADER = "The following are multiple choice questions (with answers) about common sense."
HINT = (" Note that if there is a negation in the question, we should choose the wrong answer"
        " to the original question.")
# The authors' three few-shot examples (negated OBQA questions) and their CoT rationales.
SHOTS = (
    ("If a cat has a body temp that is below average, it isn't in", ("danger", "safe ranges"),
     1, "If a cat has a body temp that is below average, it is in?"),
    ("As the barometer reading goes lower there is not a greater chance of",
     ("sunshine", "getting wet"), 0,
     "As the barometer reading goes lower there is a greater chance of?"),
    ("Coral is a type of living organism which cannot be identified in",
     ("saltwater locations that are open", "any where with liquid"), 1,
     "Coral is a type of living organism which can be identified in?"),
)
PROMPT_TYPES = ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot")
_ISP_BLOCK = re.compile(r"Question: (?P<q>.*?)\nA\. (?P<a>.*?)\nB\. (?P<b>.*?)\nAnswer:\s*$",
                        re.S)
_COT_ANSWER = re.compile(r"So the answer is ([AB])\.")


@dataclass(frozen=True)
class Item:
    """One two-choice question; `answer` is 0 (A) or 1 (B)."""

    line: int
    question: str
    choices: tuple[str, str]
    answer: int
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    isp_prompt: str | None = None  # the given prompt of the Inverse Scaling Prize form

    @property
    def key(self) -> str:
        """Pairing key of a question with its non-negated form: metadata id, else line."""
        return str(self.metadata.get("id", f"line{self.line}"))


def _parse_isp(obj: dict[str, Any], path: str | Path, lineno: int) -> Item:
    classes = obj["classes"]
    if not isinstance(classes, list) or len(classes) != 2:
        raise SuiteDataError(f"{path}:{lineno}: field 'classes' must list two answers")
    idx = obj["answer_index"]
    if idx not in (0, 1):
        raise SuiteDataError(f"{path}:{lineno}: field 'answer_index' must be 0 or 1, got {idx!r}")
    match = _ISP_BLOCK.search(str(obj["prompt"]).split("\n\n")[-1])
    if match is None:
        raise SuiteDataError(f"{path}:{lineno}: field 'prompt' does not end in a "
                             "'Question: ...\\nA. ...\\nB. ...\\nAnswer:' block")
    return Item(line=lineno, question=match["q"], choices=(match["a"], match["b"]),
                answer=int(idx), metadata=dict(obj.get("metadata") or {}),
                isp_prompt=str(obj["prompt"]))


def load(path: str | Path) -> list[Item]:
    """Read NeQA JSON Lines or the Inverse Scaling Prize form (chosen per line by its fields)."""
    items = []
    for lineno, obj in iter_jsonl(path):
        if "prompt" in obj or "classes" in obj:
            require(obj, ("prompt", "classes", "answer_index"), path, lineno)
            items.append(_parse_isp(obj, path, lineno))
            continue
        require(obj, ("question", "choices", "answer"), path, lineno)
        choices = obj["choices"]
        if not isinstance(choices, list) or len(choices) != 2:
            raise SuiteDataError(f"{path}:{lineno}: field 'choices' must list two answers")
        if obj["answer"] not in (0, 1) or isinstance(obj["answer"], bool):
            raise SuiteDataError(f"{path}:{lineno}: field 'answer' must be 0 or 1, "
                                 f"got {obj['answer']!r}")
        meta = obj.get("metadata") or {}
        if not isinstance(meta, dict):
            raise SuiteDataError(f"{path}:{lineno}: field 'metadata' must be an object")
        items.append(Item(line=lineno, question=str(obj["question"]),
                          choices=(str(choices[0]), str(choices[1])),
                          answer=int(obj["answer"]), metadata=dict(meta)))
    if not items:
        raise SuiteDataError(f"{path}: no questions")
    return items


def pair_items(negated: list[Item], original: list[Item], path: str | Path) -> list[tuple[Item, Item]]:
    """(original, negated) pairs by metadata id when both files have ids, else by order."""
    if all("id" in i.metadata for i in negated + original):
        by_key = {i.key: i for i in original}
        missing = [n.key for n in negated if n.key not in by_key]
        if missing:
            raise SuiteDataError(f"{path}: no non-negated question for id(s) "
                                 f"{', '.join(missing[:5])}")
        return [(by_key[n.key], n) for n in negated]
    if len(negated) != len(original):
        raise SuiteDataError(f"{path}: {len(original)} non-negated questions for "
                             f"{len(negated)} negated ones (pairing by line needs equal counts)")
    return list(zip(original, negated))


# ---------------------------------------------------------------------------- prompts
def _block(question: str, choices: tuple[str, str]) -> str:
    return f"Question: {question}\nA. {choices[0]}\nB. {choices[1]}\nAnswer:"


def _cot_rationale(original_q: str, answer: int) -> str:
    first = LETTERS[1 - answer]
    return (" Let's think step-by-step.\n"
            f"First, let's answer non-negated question: \"{original_q}\"\n"
            f"For this non-negated question, we have {first}.\n"
            "Then, to answer the negated question, take the other answer, which would be "
            f"{LETTERS[answer]}.\nSo the answer is {LETTERS[answer]}.")


def build_prompt(item: Item, kind: str) -> str:
    """The authors' prompt of one kind: zero_shot, zero_shot_hint, few_shot, few_shot_cot."""
    if kind not in PROMPT_TYPES:
        raise ValueError(f"unknown NeQA prompt type {kind!r}; known: {', '.join(PROMPT_TYPES)}")
    header = HEADER + (HINT if kind == "zero_shot_hint" else "")
    parts = [header]
    if kind.startswith("few_shot"):
        for q, ch, ans, orig in SHOTS:
            tail = _cot_rationale(orig, ans) if kind == "few_shot_cot" else f" {LETTERS[ans]}"
            parts.append(_block(q, ch) + tail)
    parts.append(_block(item.question, item.choices))
    return "\n\n".join(parts)


def task2_prompt(original: Item, negated: Item, index: int, hint: bool = False) -> tuple[str, int]:
    """Task 2 (tell a sentence from its negation): prompt and gold letter index.

    Both sentences end with the original question's correct answer; the option order
    alternates with `index` (even: A = the same, gold B; odd: A = different, gold A).
    """
    ans = original.choices[original.answer]
    options = ("the same", "different") if index % 2 == 0 else ("different", "the same")
    text = (f'Sentence 1: "{original.question} {ans}."\n'
            f'Sentence 2: "{negated.question} {ans}."\n'
            f"Question: The above two sentences are?\nA. {options[0]}\nB. {options[1]}\nAnswer:")
    if hint:
        text = "Negated sentences are different from original sentences.\n\n" + text
    return text, options.index("different")


# ---------------------------------------------------------------------------- predictions
def choose(logp_a: float, logp_b: float, rng: random.Random) -> int:
    """0 for A, 1 for B by the larger first-token log-probability; ties by the seeded rng."""
    if logp_a > logp_b:
        return 0
    if logp_b > logp_a:
        return 1
    return rng.choice((0, 1))


def parse_cot(completion: str) -> int:
    """The letter in "So the answer is X." of the first paragraph: 0, 1, or -1 if none/both."""
    found = set(_COT_ANSWER.findall(completion.split("\n\n")[0]))
    if len(found) != 1:
        return -1
    return LETTERS.index(found.pop())


def accuracy(preds: list[int], golds: list[int]) -> float:
    """Share of predictions equal to gold (an unparsed -1 is wrong)."""
    if not golds:
        raise ValueError("accuracy of an empty set")
    return sum(int(p == g) for p, g in zip(preds, golds, strict=True)) / len(golds)


def composed_accuracy(t1: float, s2: float) -> float:
    """t1*s2 + (1 - t1)*(1 - s2): the decomposition's prediction of NeQA accuracy."""
    for name, v in (("t1", t1), ("s2", s2)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} = {v} is not an accuracy in [0, 1]")
    return t1 * s2 + (1.0 - t1) * (1.0 - s2)
