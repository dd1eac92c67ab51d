"""NeQA (Zhang et al., 2023): negated two-choice questions, prompts and the task decomposition.

Three released layouts load into the same items: NeQA's own JSON Lines (`question`,
`choices`, `answer`, `metadata`) and the Inverse Scaling Prize form (`prompt`, `classes`,
`answer_index`) as JSON Lines or CSV (`classes` a list or a string-encoded list), whose
last `Question: ... A. ... B. ... Answer:` block is parsed back into a question and two
choices. Prompts are the authors' MMLU-style ones; the answer is whichever of ` A` / ` B`
is more probable as the first generated token (over the whole vocabulary, or as the
authors did, among the top 50 next tokens only), or, for chain-of-thought, the letter in
"So the answer is X." in the first paragraph.

Decomposition: Task 1 is answering the non-negated questions (accuracy t1); Task 2 is
telling a sentence from its negation (accuracy s2, score 2*s2 - 1). A model that answers
the negated question by answering the original one and flipping the answer exactly when it
sees the two differ is right with probability 1/2 + (t1 - 1/2)(2*s2 - 1)
= t1*s2 + (1 - t1)*(1 - s2): the composed accuracy.
"""

from __future__ import annotations

import ast
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from freqgap.errors import FreqgapError
from freqgap.suites.io import SuiteDataError, as_text, iter_csv, iter_jsonl, require

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
# The authors' few-shot hint says "non-negated" where their zero-shot hint says "original".
FEW_SHOT_HINT = (" Note that if there is a negation in the question, we should choose the wrong"
                 " answer to the non-negated question.")
PROMPT_TYPES = ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_hint", "few_shot_cot")
ISP_FIELDS = ("prompt", "classes", "answer_index")
LETTER_SCORING = ("top50", "full", "sum")
TOP_K = 50  # next-token log-probs the authors' API returned per prompt (logprobs=50)
TASK2_HINT = "Negated sentences are different from original sentences.\n\n"
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


def _isp_classes(value: Any, path: str | Path, lineno: int) -> list[str]:
    """`classes` as a list of two strings; the CSV form writes the list as a Python/JSON
    literal string ("[' A', ' B']"), read without evaluating code."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise SuiteDataError(f"{path}:{lineno}: field 'classes' {value!r} is not a list "
                                 "literal like \"[' A', ' B']\"") from None
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(c, str) for c in value)):
        raise SuiteDataError(f"{path}:{lineno}: field 'classes' must list two answers "
                             f"(strings), got {value!r}")
    return list(value)


def _parse_isp(obj: dict[str, Any], path: str | Path, lineno: int) -> Item:
    _isp_classes(obj["classes"], path, lineno)
    idx = obj["answer_index"]
    if isinstance(idx, str) and idx.strip() in ("0", "1"):
        idx = int(idx)
    if isinstance(idx, bool) or idx not in (0, 1):
        raise SuiteDataError(f"{path}:{lineno}: field 'answer_index' must be 0 or 1, got {idx!r}")
    prompt = as_text(obj, "prompt", path, lineno)
    match = _ISP_BLOCK.search(prompt.split("\n\n")[-1])
    if match is None:
        raise SuiteDataError(f"{path}:{lineno}: field 'prompt' does not end in a "
                             "'Question: ...\\nA. ...\\nB. ...\\nAnswer:' block")
    meta = obj.get("metadata") or {}
    return Item(line=lineno, question=match["q"], choices=(match["a"], match["b"]),
                answer=int(idx), metadata=dict(meta) if isinstance(meta, dict) else {},
                isp_prompt=prompt)


def _parse_own(obj: dict[str, Any], path: str | Path, lineno: int) -> Item:
    require(obj, ("question", "choices", "answer"), path, lineno)
    question = as_text(obj, "question", path, lineno)
    choices = obj["choices"]
    if not isinstance(choices, list) or len(choices) != 2:
        raise SuiteDataError(f"{path}:{lineno}: field 'choices' must list two answers")
    if not all(isinstance(c, str) for c in choices):
        raise SuiteDataError(f"{path}:{lineno}: field 'choices' is {choices!r}, not two strings")
    if obj["answer"] not in (0, 1) or isinstance(obj["answer"], bool):
        raise SuiteDataError(f"{path}:{lineno}: field 'answer' must be 0 or 1, "
                             f"got {obj['answer']!r}")
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise SuiteDataError(f"{path}:{lineno}: field 'metadata' must be an object")
    return Item(line=lineno, question=question, choices=(choices[0], choices[1]),
                answer=int(obj["answer"]), metadata=dict(meta))


def load(path: str | Path) -> list[Item]:
    """Read NeQA JSON Lines, or the Inverse Scaling Prize form as JSON Lines (chosen per line
    by its fields) or as CSV (a file ending in .csv, header prompt, classes, answer_index)."""
    items = []
    if str(path).lower().endswith(".csv"):
        for lineno, row in iter_csv(path, ISP_FIELDS, strip=False):
            items.append(_parse_isp(row, path, lineno))
    else:
        for lineno, obj in iter_jsonl(path):
            if "prompt" in obj or "classes" in obj:
                require(obj, ISP_FIELDS, path, lineno)
                items.append(_parse_isp(obj, path, lineno))
            else:
                items.append(_parse_own(obj, path, lineno))
    if not items:
        raise SuiteDataError(f"{path}: no questions")
    return items


def sample_indices(n_items: int, size: int, seed: int) -> list[int]:
    """The authors' sample: `random.seed(seed); random.shuffle(items); items[:size]`.

    `random.shuffle` draws depend only on the list's length and the generator's state, so
    shuffling the positions 0..n-1 gives the same permutation as shuffling the items;
    the returned positions are in the shuffled order (the sample's item order)."""
    if not 1 <= size <= n_items:
        raise SuiteDataError(f"--sample {size}: must be between 1 and the {n_items} questions "
                             "in the file")
    order = list(range(n_items))
    random.Random(seed).shuffle(order)
    return order[:size]


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


# ---------------------------------------------------------------------------- Task 2 files
NORMALIZED = "_normalized"
TASK2_FLAGS = "--task2-data and --task2-original"


def normalized_names(path: str | Path, data_stem: str) -> list[Path]:
    """Where the authors' Task 2 file of `path` may sit: `_normalized` inserted right after
    the dataset's stem, as their release names it (neqa_100_nonnegated.jsonl ->
    neqa_100_normalized_nonnegated.jsonl), and the other order, `<stem>_normalized<ext>`
    (neqa_100.jsonl -> neqa_100_normalized.jsonl, where both rules agree)."""
    p = Path(path)
    names = []
    if p.stem.startswith(data_stem + "_") and p.stem != data_stem:
        names.append(f"{data_stem}{NORMALIZED}{p.stem[len(data_stem):]}{p.suffix}")
    names.append(f"{p.stem}{NORMALIZED}{p.suffix}")
    return [p.with_name(n) for n in dict.fromkeys(names)]


def _find_normalized(path: str | Path, data_stem: str, role: str) -> Path:
    """The one existing normalized file of `path`; none or two is an error naming them,
    never a silent fall-back to the plain file (whose questions end in " ___ ?")."""
    names = normalized_names(path, data_stem)
    found = [n for n in names if n.is_file()]
    if len(found) == 1:
        return found[0]
    looked = " or ".join(str(n) for n in names)
    if found:
        raise SuiteDataError(f"{path}: two normalized {role} files ({looked}); Task 2 needs "
                             f"one: pass {TASK2_FLAGS}")
    raise SuiteDataError(f"{path}: no normalized {role} file for Task 2 (looked for {looked}); "
                         f"pass {TASK2_FLAGS}, or --task2-plain to run Task 2 on the plain "
                         "files (recorded in the manifests)")


def task2_files(data: str | Path, original: str | Path, task2_data: str | Path | None = None,
                task2_original: str | Path | None = None,
                plain: bool = False) -> tuple[Path, Path]:
    """(negated, non-negated) files Task 2 is built from: the flags when given, the plain
    files themselves with `plain` (--task2-plain, recorded by the caller), else the
    authors' normalized files beside `data` and `original` (found by name, or refused)."""
    if plain:
        if task2_data or task2_original:
            raise SuiteDataError(f"--task2-plain and {TASK2_FLAGS.replace(' and ', '/')} "
                                 "both given; pass one of them")
        return Path(data), Path(original)
    stem = Path(data).stem
    neg = Path(task2_data) if task2_data else _find_normalized(data, stem, "negated")
    orig = (Path(task2_original) if task2_original
            else _find_normalized(original, stem, "non-negated"))
    return neg, orig


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
    """The authors' prompt of one kind: zero_shot, zero_shot_hint, few_shot, few_shot_hint,
    few_shot_cot."""
    if kind not in PROMPT_TYPES:
        raise ValueError(f"unknown NeQA prompt type {kind!r}; known: {', '.join(PROMPT_TYPES)}")
    header = HEADER + {"zero_shot_hint": HINT, "few_shot_hint": FEW_SHOT_HINT}.get(kind, "")
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
        text = TASK2_HINT + text
    return text, options.index("different")


# ---------------------------------------------------------------------------- predictions
class LetterTokenError(FreqgapError):
    """The tokenizer cannot score the answer letters as single next tokens."""


def letter_token_ids(lm, letters: Sequence[str]) -> list[int]:
    """The first token of each letter form (" A", " B"), checked: it must decode to the
    letter itself (stripped of spaces) and differ between letters; otherwise comparing
    first tokens would compare p(" A") with p(" ") and no answer is scored."""
    ids = []
    for form in letters:
        try:
            enc = lm.encode(form)
        except FreqgapError:
            enc = []
        first = lm.decode(enc[:1]) if enc else ""
        if not enc or first.strip() != form.strip() or not form.strip():
            pieces = [lm.decode([t]) for t in enc]
            raise LetterTokenError(
                f"tokenizer of {lm.name}: {form!r} encodes as {pieces!r}, whose first token "
                f"does not decode to the letter {form.strip()!r}; NeQA scores each letter as "
                "one next token, so use a model whose tokenizer has single-token letters (or "
                "set neqa.letters in conf/suites.yaml to forms that are)")
        ids.append(int(enc[0]))
    if len(set(ids)) != len(ids):
        raise LetterTokenError(f"tokenizer of {lm.name}: letters {list(letters)} share their "
                               "first token; set neqa.letters in conf/suites.yaml")
    return ids


def choose(logp_a: float, logp_b: float, rng: random.Random) -> int:
    """0 for A, 1 for B by the larger log-probability; a tie (also both absent, -inf) is a
    coin from `rng`: `rng.choice((0, 1))`, drawn only for tied items, in item order."""
    if logp_a > logp_b:
        return 0
    if logp_b > logp_a:
        return 1
    return rng.choice((0, 1))


def top_k_view(logp_a: float, logp_b: float, a_in_top: bool,
               b_in_top: bool) -> tuple[float, float]:
    """The authors' view of the two letters: a letter's log-prob when its token is among
    the top-k next tokens the model returned, else absent (-inf)."""
    return (logp_a if a_in_top else -math.inf, logp_b if b_in_top else -math.inf)


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


def task2_score(s2: float) -> float:
    """Task 2's score on the chance-centred scale: 2*s2 - 1 (0 = chance, 1 = perfect,
    -1 = always calls the negation "the same"), as the authors' task decomposition."""
    return 2.0 * s2 - 1.0


def composed_accuracy(t1: float, s2: float) -> float:
    """1/2 + (t1 - 1/2)*(2*s2 - 1) = t1*s2 + (1 - t1)*(1 - s2): the decomposition's
    prediction of NeQA accuracy from Task 1 accuracy and Task 2's score."""
    for name, v in (("t1", t1), ("s2", s2)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} = {v} is not an accuracy in [0, 1]")
    return 0.5 + (t1 - 0.5) * task2_score(s2)
