"""Evaluating one model on one suite: prompts -> model interface -> predictions, details, metrics.

Each suite turns its benchmark file into instances and instance terms (model-independent,
with stable ids) and, given a model behind the interface of freqgap.inference.lm (any
backend: transformers, a fake for tests), into prediction rows in the DATA.md shape,
suite-specific detail rows (scores, surprisals) and a metrics dictionary. Every prompt is
checked against the model's context length first (`fit_context`): refused, or cut on the
left with the count recorded, never cut silently.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import sys
from pathlib import Path
from typing import Any, Sequence

from freqgap.errors import FreqgapError
from freqgap.inference.lm import PARAGRAPH, GenerateRequest, LoglikelihoodRequest
from freqgap.suites import neqa, quantifiers, terms, tinad
from freqgap.suites.io import SuiteDataError
from freqgap.suites.tables import instance_row, prediction_row, term_rows

OVERLONG = ("refuse", "truncate")


class ContextLengthError(FreqgapError):
    """Prompts do not fit the model's context and the settings say to refuse."""


def float_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """The accuracy-valued (float) entries of a flat metrics dictionary."""
    return {k: v for k, v in metrics.items() if isinstance(v, float)}


def logsumexp(values: Sequence[float]) -> float:
    """log(sum(exp(v))) without underflow (log-probs of rare tokens are far below -700)."""
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def token_counts(lm, texts: Sequence[str]) -> list[int]:
    """Tokens of each text alone (the backend's batch encoder when it has one)."""
    batch = getattr(lm, "encode_batch", None)
    return [len(ids) for ids in batch(list(texts))] if batch else [len(lm.encode(t)) for t in texts]


def shared_blocks(prompts: Sequence[str]) -> str:
    """The blank-line-separated blocks every prompt starts with (a header, the few-shot
    shots), through the last shared blank line: the prefix whose key/value cache a backend
    computes once. "" when the prompts share no whole block."""
    if not prompts:
        return ""
    common = os.path.commonprefix(list(prompts))
    end = common.rfind("\n\n")
    return common[:end + 2] if end >= 0 else ""


def fit_context(lm, task: str, texts: Sequence[str], extra: Sequence[int] | int,
                policy: str) -> int:
    """How many of `texts` (plus `extra` tokens each: generated or continuation tokens) do
    not fit the model's context. `refuse` raises naming the task and the longest; `truncate`
    lets them be cut on the left (by the backend, or `cut_left` for generation) and prints
    one warning line."""
    if policy not in OVERLONG:
        raise SuiteDataError(f"conf/suites.yaml overlong: {policy!r}; use refuse or truncate")
    extras = [extra] * len(texts) if isinstance(extra, int) else list(extra)
    need = [n + e for n, e in zip(token_counts(lm, texts), extras, strict=True)]
    over = [n for n in need if n > lm.max_length]
    if not over:
        return 0
    what = (f"{task}: {len(over)} of {len(texts)} prompts need more than {lm.name}'s "
            f"{lm.max_length}-token context (longest {max(over)} tokens)")
    if policy == "refuse":
        raise ContextLengthError(f"{what}; use a model with a longer context, fewer shots, or "
                                 "set overlong: truncate in conf/suites.yaml to cut them on the "
                                 "left (counted in the manifest)")
    print(f"warning: {what}; cut on the left (overlong: truncate), counted in the manifest",
          file=sys.stderr)
    return len(over)


def cut_left(lm, text: str, budget: int, max_tries: int = 16) -> str:
    """`text` cut on the left to whole tokens so that it plus `budget` generated tokens fit
    the context (re-encoding the decoded tail can merge tokens: checked, bounded retries)."""
    ids = lm.encode(text)
    keep = lm.max_length - budget
    for _ in range(max_tries):
        if keep < 1:
            break
        tail = lm.decode(ids[-keep:])
        if len(lm.encode(tail)) + budget <= lm.max_length:
            return tail
        keep -= 1
    raise ContextLengthError(f"{lm.name}: its {lm.max_length}-token context leaves no room for "
                             f"a prompt and {budget} generated tokens; lower cot_max_new_tokens "
                             "in conf/suites.yaml")


class Suite:
    """What the pipeline asks of a suite: model-independent instances and terms, and an
    evaluation of one model; `headline` metrics are plotted against size."""

    name = ""
    headline: tuple[str, ...] = ()
    chance = 0.5

    def __init__(self, conf: dict[str, Any], overlong: str = "refuse") -> None:
        self.conf = conf
        self.overlong = overlong
        self.truncated: dict[str, int] = {}

    @staticmethod
    def flat_metrics(metrics: dict[str, Any]) -> dict[str, float]:
        return float_metrics(metrics)

    def input_files(self) -> list[str]:
        """Files beyond --data/--original the instances depend on."""
        return []

    def fit(self, lm, task: str, texts: Sequence[str], extra: Sequence[int] | int) -> None:
        """Check `texts` against the context (see fit_context); counts go to `truncated`."""
        n = fit_context(lm, task, texts, extra, self.overlong)
        if n:
            self.truncated[task] = self.truncated.get(task, 0) + n

    def vocabulary(self, trows: list[dict]) -> list[str]:
        """The words the counting job needs (`--vocab`), from the instance terms."""
        return terms.vocabulary(tuple(t for t in (r["t1"], r["t2"], r["t3"]) if t)
                                for r in trows)

    def counts_needed(self, vocab: list[str], term_conf: dict[str, Any]) -> dict[str, Any]:
        """What the counts must provide, checked by the gaps stage against the counts
        manifest: the term rules of conf/terms.yaml and the vocabulary."""
        needed = {k: term_conf.get(k) for k in ("window", "number_rule", "max_digits")}
        needed["vocab"] = vocab
        return needed

    def check_counts(self, counts: str | Path) -> None:
        """Refuse, before any model loads, counts this suite cannot use (none by default)."""

    def report(self, out: Path, gaps) -> Any:
        """Outputs of the suite's own beyond the gaps (a GapsResult); none by default."""
        return None

    def generate(self, lm, task: str, prompts: list[str], budget: int, stop) -> list[str]:
        """Greedy continuations of at most `budget` tokens ended by `stop`; the shared
        blocks (the shots) are the prefix whose key/value cache the backend computes once.
        Prompts too long for the context are refused or cut on the left (`fit`)."""
        self.fit(lm, task, prompts, budget)
        prefix = shared_blocks(prompts)
        requests = []
        for p, n in zip(prompts, token_counts(lm, prompts)):
            if n + budget > lm.max_length:   # allowed by fit (overlong: truncate): cut here
                requests.append(GenerateRequest(cut_left(lm, p, budget), max_new_tokens=budget,
                                                stop=stop))
            else:
                requests.append(GenerateRequest(p, max_new_tokens=budget, stop=stop,
                                                prefix=prefix))
        return lm.generate_until(requests)

    def instances(self) -> tuple[list[dict], list[dict]]:
        raise NotImplementedError

    def evaluate(self, lm) -> tuple[list[dict], list[dict], dict[str, Any]]:
        raise NotImplementedError


# ================================================================================ NeQA
def _aligned(items: list[neqa.Item], other: list[neqa.Item], path: str | Path,
             what: str) -> None:
    """`other` must hold the same questions as `items`, line for line (same ids when both
    have them): the sample's positions are applied to both."""
    if len(other) != len(items):
        raise SuiteDataError(f"{path}: {len(other)} {what} for the {len(items)} questions of "
                             "the main file (they must match line for line)")
    for a, b in zip(items, other):
        if "id" in a.metadata and "id" in b.metadata and a.key != b.key:
            raise SuiteDataError(f"{path}:{b.line}: id {b.key!r} where the main file has "
                                 f"{a.key!r} on line {a.line} (they must match line for line)")


class NeQASuite(Suite):
    """NeQA prompts (zero-shot, hint, few-shot, CoT) plus Task 1 / Task 2 when the
    non-negated questions are given. Task 2 is built from the normalized files (the
    authors' `*_normalized`), Task 1 and the NeQA prompts from the main ones."""

    name = "neqa"

    def __init__(self, data: str | Path, conf: dict[str, Any], original: str | Path | None = None,
                 limit: int | None = None, task2_data: str | Path | None = None,
                 task2_original: str | Path | None = None, sample: int | None = None,
                 seed: int = 42, overlong: str = "refuse", task2_plain: bool = False) -> None:
        super().__init__(conf, overlong)
        if limit is not None and sample is not None:
            raise SuiteDataError("--limit and --sample both given; --sample N takes the "
                                 "authors' seeded sample, --limit N the first N lines")
        items = neqa.load(data)
        pairs = neqa.pair_items(items, neqa.load(original), original) if original else None
        if (task2_data is not None or task2_original is not None or task2_plain) \
                and original is None:
            raise SuiteDataError("--task2-data/--task2-original/--task2-plain need --original "
                                 "(Task 1 and Task 2 use the non-negated questions)")
        self.task2_plain = bool(task2_plain)
        self.task2_files = None
        t2_pairs = None
        if original is not None:
            t2_neg, t2_orig = neqa.task2_files(data, original, task2_data, task2_original,
                                               task2_plain)
            self.task2_files = [str(t2_neg), str(t2_orig)]
            neg_items = neqa.load(t2_neg) if t2_neg != Path(data) else items
            _aligned(items, neg_items, t2_neg, "Task 2 questions")
            t2_pairs = neqa.pair_items(neg_items, neqa.load(t2_orig), t2_orig)
        positions = (neqa.sample_indices(len(items), sample, seed) if sample is not None
                     else list(range(len(items)))[:limit])
        self.positions = positions
        self.items = [items[i] for i in positions]
        self.pairs = [pairs[i] for i in positions] if pairs is not None else None
        # Task 2 as the authors' Task2(max_instances): the first N lines in file order, never
        # the shuffled sample, and its option order alternates with the file position.
        self.task2_items = items[:len(positions)]
        self.task2_pairs = t2_pairs[:len(positions)] if t2_pairs is not None else None
        self.prompt_types = list(conf.get("prompt_types", neqa.PROMPT_TYPES))
        for kind in self.prompt_types:
            if kind not in neqa.PROMPT_TYPES:
                raise SuiteDataError(f"conf neqa.prompt_types: unknown type {kind!r}")
        self.letter_scoring = str(conf.get("letter_scoring", "top50"))
        if self.letter_scoring not in neqa.LETTER_SCORING:
            raise SuiteDataError(f"--letter-scoring {self.letter_scoring!r}: use "
                                 f"{' or '.join(neqa.LETTER_SCORING)}")

    def input_files(self) -> list[str]:
        """Every file the instances depend on (the normalized Task 2 files included)."""
        return list(self.task2_files or ())

    @staticmethod
    def _terms(item: neqa.Item) -> dict[str, tuple[str, ...]]:
        right, wrong = item.choices[item.answer], item.choices[1 - item.answer]
        h_right, h_wrong = terms.head(right), terms.head(wrong)
        return {"answer": terms.term_set(h_right), "distractor": terms.term_set(h_wrong),
                "options": terms.term_set(h_right, h_wrong),
                "subject,answer": terms.term_set(terms.subject(item.question), h_right)}

    def tasks(self) -> list[str]:
        out = [f"neqa/{k}" for k in self.prompt_types]
        if self.pairs is not None:
            out += ["neqa/task1", "neqa/task2", "neqa/task2_hint"]
        return out

    def prompts(self, task: str) -> tuple[list[str], list[int]]:
        """The prompts of one task, in item order, and their gold letter indices."""
        kind = task.split("/", 1)[1]
        if kind == "task1":
            return ([neqa.build_prompt(o, "zero_shot") for o, _ in self.pairs],
                    [o.answer for o, _ in self.pairs])
        if kind in ("task2", "task2_hint"):
            made = [neqa.task2_prompt(o, n, i, kind == "task2_hint")
                    for i, (o, n) in enumerate(self.task2_pairs)]
            return [p for p, _ in made], [g for _, g in made]
        return ([it.isp_prompt if (kind == "zero_shot" and it.isp_prompt) else
                 neqa.build_prompt(it, kind) for it in self.items],
                [it.answer for it in self.items])

    def instances(self) -> tuple[list[dict], list[dict]]:
        inst, trows = [], []
        for task in self.tasks():
            _, golds = self.prompts(task)
            for i, item in enumerate(self.items):
                src = (self.pairs[i][0] if task == "neqa/task1" else
                       self.task2_items[i] if task.startswith("neqa/task2") else item)
                inst.append(instance_row(task, i, src.question, neqa.LETTERS[golds[i]]))
                trows += term_rows(task, i, self._terms(src))
        return inst, trows

    def _letters(self, lm, prompts: list[str], ids: list[int] | None,
                 task: str) -> tuple[list[tuple[float, float]], int | None]:
        """(log p(A), log p(B)) per prompt as the scoring rule sees them, and how many
        prompts had both letters outside the top 50 (the only case where top50 and full
        can differ: a letter in the top 50 beats any letter outside it in both).
        `sum` scores each letter form as a continuation, its tokens' log-probs summed."""
        if self.letter_scoring == "sum":
            forms = list(self.conf.get("letters", [" A", " B"]))
            self.fit(lm, task, prompts, max(token_counts(lm, forms)))
            scores = lm.loglikelihood([LoglikelihoodRequest(p, f) for p in prompts
                                       for f in forms])
            return [(scores[2 * i].total, scores[2 * i + 1].total)
                    for i in range(len(prompts))], None
        self.fit(lm, task, prompts, 1)
        rows = lm.next_token_logprobs(prompts, ids, top_k=neqa.TOP_K,
                                      prefix=shared_blocks(prompts))
        out, outside = [], 0
        for r in rows:
            top = {t.id for t in r.top}
            la, lb = r.candidates
            if ids[0] not in top and ids[1] not in top:
                outside += 1
            out.append(neqa.top_k_view(la, lb, ids[0] in top, ids[1] in top)
                       if self.letter_scoring == "top50" else (la, lb))
        return out, outside

    def evaluate(self, lm) -> tuple[list[dict], list[dict], dict[str, Any]]:
        letters = self.conf.get("letters", [" A", " B"])
        ids = None if self.letter_scoring == "sum" else neqa.letter_token_ids(lm, letters)
        model_name, revision = lm.name, lm.revision
        preds, details = [], []
        metrics: dict[str, Any] = {"letter_scoring": self.letter_scoring}
        outside_top = {}

        def two_choice(task: str, k: int, prompts: list[str], golds: list[int]) -> float:
            rng = random.Random(int(self.conf.get("tie_seed", 42)))
            logp, outside = self._letters(lm, prompts, ids, task)
            outside_top[task.split("/")[1]] = outside
            chosen = []
            for i, ((la, lb), gold) in enumerate(zip(logp, golds)):
                c = neqa.choose(la, lb, rng)
                chosen.append(c)
                preds.append(prediction_row(model_name, revision, task, k, i,
                                            letters[c], neqa.LETTERS[c], c == gold))
                details.append({"task": task, "instance_id": i, "logp_a": la,
                                "logp_b": lb, "pred": c, "gold": gold})
            return neqa.accuracy(chosen, golds)

        for kind in self.prompt_types:
            task, k = f"neqa/{kind}", (len(neqa.SHOTS) if kind.startswith("few_shot") else 0)
            prompts, golds = self.prompts(task)
            if kind == "few_shot_cot":
                texts = self.chain_of_thought(lm, prompts, task)
                chosen = [neqa.parse_cot(t) for t in texts]
                for i, (t, c, g) in enumerate(zip(texts, chosen, golds)):
                    preds.append(prediction_row(model_name, revision, task, k, i, t,
                                                neqa.LETTERS[c] if c >= 0 else "", c == g))
                    details.append({"task": task, "instance_id": i, "logp_a": None,
                                    "logp_b": None, "pred": c, "gold": g})
                metrics[kind] = neqa.accuracy(chosen, golds)
                metrics[f"{kind}_unparsed"] = sum(c < 0 for c in chosen) / len(chosen)
            else:
                metrics[kind] = two_choice(task, k, prompts, golds)
        if self.pairs is not None:
            t1 = two_choice("neqa/task1", 0, *self.prompts("neqa/task1"))
            metrics["task1"] = t1
            for task in ("neqa/task2", "neqa/task2_hint"):
                s2 = two_choice(task, 0, *self.prompts(task))
                kind = task.split("/")[1]
                suffix = "_hint" if kind.endswith("_hint") else ""
                metrics[kind] = s2
                metrics[f"{kind}_score"] = neqa.task2_score(s2)
                metrics["composed" + suffix] = neqa.composed_accuracy(t1, s2)
        metrics["both_letters_outside_top50"] = outside_top
        metrics["n"] = len(self.items)
        return preds, details, metrics

    def chain_of_thought(self, lm, prompts: list[str], task: str) -> list[str]:
        """Greedy CoT continuations up to `cot_max_new_tokens`, ended by a token holding a
        blank line (only the first paragraph is parsed); the shared shots are the prefix
        whose key/value cache the backend computes once."""
        return self.generate(lm, task, prompts, int(self.conf.get("cot_max_new_tokens", 200)),
                             PARAGRAPH)

    headline = ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot", "composed")


# ================================================================================ TINaD
class TinadSuite(Suite):
    """True/False next-token protocol; the authors' scorer on the resulting predictions.
    `limit` counts test_id groups (whole groups only)."""

    name = "tinad"

    def __init__(self, data: str | Path, conf: dict[str, Any], limit: int | None = None,
                 overlong: str = "refuse") -> None:
        super().__init__(conf, overlong)
        self.rows = tinad.first_groups(tinad.load(data), limit)
        tinad.check_groups(self.rows, data)

    @staticmethod
    def _terms(row: tinad.Sentence) -> dict[str, tuple[str, ...]]:
        content = terms.content_terms(row.sentence)
        first = content[0] if content else None
        last = content[-1] if content else None
        return {"subject": terms.term_set(first), "object": terms.term_set(last),
                "concepts": terms.term_set(first, last)}

    def _tasks_of(self, row: tinad.Sentence) -> list[str]:
        return ["tinad/zero_shot", "tinad/affirmation" if row.affirmative else "tinad/negation"]

    def instances(self) -> tuple[list[dict], list[dict]]:
        inst, trows = [], []
        for i, row in enumerate(self.rows):
            for task in self._tasks_of(row):
                inst.append(instance_row(task, i, row.sentence, str(row.label)))
                trows += term_rows(task, i, self._terms(row))
        return inst, trows

    def token_ids(self, lm) -> tuple[list[int], list[int]]:
        """First-token ids compared: every configured form of True and of False
        (the first subword of each, duplicates once)."""
        def first_ids(forms: list[str]) -> list[int]:
            seen: dict[int, None] = {}
            for form in forms:
                ids = lm.encode(form)
                if not ids:
                    raise SuiteDataError(f"conf tinad forms: {form!r} encodes to no tokens")
                seen.setdefault(ids[0], None)
            return list(seen)

        t = first_ids(list(self.conf.get("true_forms", [" True", "True"])))
        f = first_ids(list(self.conf.get("false_forms", [" False", "False"])))
        if set(t) & set(f):
            raise SuiteDataError(f"tokenizer of {lm.name}: a True form and a False form share "
                                 "their first token; choose other tinad.true_forms/false_forms "
                                 "in conf/suites.yaml")
        return t, f

    def evaluate(self, lm) -> tuple[list[dict], list[dict], dict[str, Any]]:
        t_ids, f_ids = self.token_ids(lm)
        threshold = float(self.conf.get("threshold", 0.5))
        prompts = [tinad.prompt(r.sentence) for r in self.rows]
        self.fit(lm, "tinad/zero_shot", prompts, 1)
        rows = lm.next_token_logprobs(prompts, t_ids + f_ids)
        preds, details, scored = [], [], []
        for i, (row, r) in enumerate(zip(self.rows, rows)):
            lt, lf = logsumexp(r.candidates[:len(t_ids)]), logsumexp(r.candidates[len(t_ids):])
            p_true, p_false = math.exp(lt), math.exp(lf)
            s = 1.0 / (1.0 + math.exp(min(lf - lt, 700.0)))  # p(True)/(p(True)+p(False))
            guess = s > threshold
            scored.append(dataclasses.replace(row, prediction=guess))
            for task in self._tasks_of(row):
                preds.append(prediction_row(lm.name, lm.revision, task, 0, i, str(guess),
                                            str(guess), guess == row.label))
            details.append({"instance_id": i, "p_true": p_true, "p_false": p_false,
                            "score": s, "prediction": guess, "label": row.label})
        metrics = tinad.score(scored)
        return preds, details, metrics

    @staticmethod
    def flat_metrics(metrics: dict[str, Any]) -> dict[str, float]:
        """Accuracies and coherence on a 0-1 scale for the scaling plot."""
        out = {k: metrics[k]["accuracy"] / 100 for k in ("all", "all_affirmations", "all_negations")
               if k in metrics}
        out["coherence_all"] = metrics["coherence_scores"]["All"]["Coherence_percentage"] / 100
        return out

    headline = ("all", "all_affirmations", "all_negations", "coherence_all")


# ================================================================================ quantifiers
class QuantifierSuite(Suite):
    """Critical-word surprisal after most-/few-type quantifiers; four comparison metrics."""

    name = "quantifiers"

    def __init__(self, data: str | Path, conf: dict[str, Any], limit: int | None = None,
                 overlong: str = "refuse") -> None:
        super().__init__(conf, overlong)
        self.stimuli = quantifiers.load(data)[:limit]
        self.comps = quantifiers.plan(self.stimuli)
        self.reduce = conf.get("reduce", "sum")
        if self.reduce not in ("sum", "mean"):
            raise SuiteDataError(f"conf quantifiers.reduce must be sum or mean, got {self.reduce!r}")

    def _terms(self, c: quantifiers.Comparison) -> dict[str, tuple[str, ...]]:
        noun = terms.subject(c.backbone)
        if c.metric in ("earlier", "control"):
            typ, atyp = (terms.word_term(w) for w in c.word.split("|"))
            return {"typical": terms.term_set(typ), "atypical": terms.term_set(atyp),
                    "backbone,typical": terms.term_set(noun, typ),
                    "backbone,atypical": terms.term_set(noun, atyp)}
        word = terms.word_term(c.word)
        out = {"critical": terms.term_set(word),
               "backbone,critical": terms.term_set(noun, word)}
        if c.metric == "exp2":
            q = terms.word_term(c.quantifier.split()[-1])
            out["quantifier,critical"] = terms.term_set(q, word)
        return out

    def instances(self) -> tuple[list[dict], list[dict]]:
        inst, trows = [], []
        for i, c in enumerate(self.comps):
            task = f"quantifiers/{c.metric}"
            inst.append(instance_row(task, i, c.sentence, c.low_choice))
            trows += term_rows(task, i, self._terms(c))
        return inst, trows

    def evaluate(self, lm) -> tuple[list[dict], list[dict], dict[str, Any]]:
        keys = quantifiers.keys_needed(self.comps)
        self.fit(lm, "quantifiers", [c for c, _ in keys],
                 token_counts(lm, [f" {w}" for _, w in keys]))
        scores = lm.loglikelihood([LoglikelihoodRequest(c, f" {w}") for c, w in keys])
        surprisal = {k: s.surprisal_bits(self.reduce) for k, s in zip(keys, scores)}
        details = [{"context": c, "word": w, "n_subwords": len(s.token_ids),
                    "surprisal_sum_bits": s.surprisal_bits("sum"),
                    "surprisal_mean_bits": s.surprisal_bits("mean"), "truncated": s.truncated}
                   for (c, w), s in zip(keys, scores)]
        preds, correct = [], []
        for i, comp in enumerate(self.comps):
            ok, choice = comp.judge(surprisal)
            correct.append(ok)
            preds.append(prediction_row(lm.name, lm.revision, f"quantifiers/{comp.metric}", 0,
                                        i, choice, choice, ok))
        metrics = quantifiers.summarise(self.comps, correct)
        metrics["reduce"] = self.reduce
        return preds, details, metrics

    headline = ("earlier_most", "earlier_few", "exp1", "exp2", "control")
