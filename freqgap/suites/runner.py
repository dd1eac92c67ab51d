"""Evaluating one model on one suite: prompts -> inference -> predictions, details, metrics.

Each suite turns its benchmark file into instances and instance terms (model-independent,
with stable ids) and, given a loaded model, into prediction rows in the DATA.md shape,
suite-specific detail rows (scores, surprisals) and a metrics dictionary.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import torch

from freqgap.inference.generate import Generator
from freqgap.inference.logprobs import continuation_logprobs, first_token_id, next_token_logprobs
from freqgap.suites import neqa, quantifiers, terms, tinad
from freqgap.suites.io import SuiteDataError
from freqgap.suites.tables import instance_row, prediction_row, term_rows


def parameter_count(model) -> int:
    """Number of parameters (the x axis of scaling plots)."""
    return int(sum(p.numel() for p in model.parameters()))


def float_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """The accuracy-valued (float) entries of a flat metrics dictionary."""
    return {k: v for k, v in metrics.items() if isinstance(v, float)}


def distinct_first_ids(tokenizer, forms: list[str]) -> list[int]:
    """First-subword ids of the given surface forms, duplicates removed, order kept."""
    seen: dict[int, None] = {}
    for form in forms:
        seen.setdefault(first_token_id(tokenizer, form), None)
    return list(seen)


class ParagraphGenerator(Generator):
    """The inference module's greedy decoder, stopping at a blank line or eos instead of at
    any newline: a chain-of-thought answer spans several lines, and the authors' parser
    reads its first paragraph only."""

    def _stop_mask(self) -> torch.Tensor:
        mask = super()._stop_mask()  # every token holding a newline, and eos
        eos = self.tokenizer.eos_token_id
        for i in mask.nonzero().flatten().tolist():
            if i != eos and "\n\n" not in self.tokenizer.decode([i]):
                mask[i] = False
        return mask


def generate_cot(model, tokenizer, prompts: list[str], max_new_tokens: int,
                 batch_size: int) -> list[str]:
    """Greedy continuations of few-shot prompts, the shared shots' key/value cache reused."""
    gen = ParagraphGenerator(model, tokenizer, max_new_tokens=max_new_tokens,
                             batch_size=batch_size)
    prefix = prompts[0][:prompts[0].rindex("Question: ")] if prompts else ""
    return gen.generate_group(prefix, prompts)


class Suite:
    """What the pipeline asks of a suite: model-independent instances and terms, and an
    evaluation of one loaded model; `headline` metrics are plotted against size."""

    name = ""
    headline: tuple[str, ...] = ()
    chance = 0.5

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf

    @staticmethod
    def flat_metrics(metrics: dict[str, Any]) -> dict[str, float]:
        return float_metrics(metrics)

    def instances(self) -> tuple[list[dict], list[dict]]:
        raise NotImplementedError

    def evaluate(self, model, tokenizer, model_name: str, revision: str | None,
                 batch_size: int) -> tuple[list[dict], list[dict], dict[str, Any]]:
        raise NotImplementedError


# ================================================================================ NeQA
class NeQASuite(Suite):
    """NeQA prompts (zero-shot, hint, few-shot, CoT) plus Task 1 / Task 2 when the
    non-negated questions are given."""

    name = "neqa"

    def __init__(self, data: str | Path, conf: dict[str, Any], original: str | Path | None = None,
                 limit: int | None = None) -> None:
        super().__init__(conf)
        items = neqa.load(data)
        self.pairs = (neqa.pair_items(items, neqa.load(original), original)[:limit]
                      if original is not None else None)
        self.items = items[:limit]
        self.prompt_types = list(conf.get("prompt_types", neqa.PROMPT_TYPES))
        for kind in self.prompt_types:
            if kind not in neqa.PROMPT_TYPES:
                raise SuiteDataError(f"conf neqa.prompt_types: unknown type {kind!r}")

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

    def instances(self) -> tuple[list[dict], list[dict]]:
        inst, trows = [], []
        for task in self.tasks():
            for i, item in enumerate(self.items):
                src = self.pairs[i][0] if task == "neqa/task1" else item
                gold = src.answer
                if task.startswith("neqa/task2"):
                    gold = neqa.task2_prompt(*self.pairs[i], i)[1]
                inst.append(instance_row(task, i, src.question, neqa.LETTERS[gold]))
                trows += term_rows(task, i, self._terms(src))
        return inst, trows

    def evaluate(self, model, tokenizer, model_name: str, revision: str | None,
                 batch_size: int) -> tuple[list[dict], list[dict], dict[str, Any]]:
        letters = self.conf.get("letters", [" A", " B"])
        ids = [first_token_id(tokenizer, x) for x in letters]
        if ids[0] == ids[1]:
            raise SuiteDataError(f"letters {letters} share their first token for this tokenizer")
        preds, details, metrics = [], [], {}

        def two_choice(task: str, k: int, prompts: list[str], golds: list[int],
                       continuation_texts: tuple[str, str]) -> float:
            rng = random.Random(int(self.conf.get("tie_seed", 42)))
            logp = next_token_logprobs(model, tokenizer, prompts, token_ids=ids,
                                       batch_size=batch_size, label=task)
            chosen = []
            for i, (row, gold) in enumerate(zip(logp.tolist(), golds)):
                c = neqa.choose(row[0], row[1], rng)
                chosen.append(c)
                preds.append(prediction_row(model_name, revision, task, k, i,
                                            continuation_texts[c], neqa.LETTERS[c], c == gold))
                details.append({"task": task, "instance_id": i, "logp_a": row[0],
                                "logp_b": row[1], "pred": c, "gold": gold})
            return neqa.accuracy(chosen, golds)

        golds = [it.answer for it in self.items]
        for kind in self.prompt_types:
            task, k = f"neqa/{kind}", (len(neqa.SHOTS) if kind.startswith("few_shot") else 0)
            prompts = [it.isp_prompt if (kind == "zero_shot" and it.isp_prompt) else
                       neqa.build_prompt(it, kind) for it in self.items]
            if kind == "few_shot_cot":
                texts = generate_cot(model, tokenizer, prompts,
                                     int(self.conf.get("cot_max_new_tokens", 128)), batch_size)
                chosen = [neqa.parse_cot(t) for t in texts]
                for i, (t, c, g) in enumerate(zip(texts, chosen, golds)):
                    preds.append(prediction_row(model_name, revision, task, k, i, t,
                                                neqa.LETTERS[c] if c >= 0 else "", c == g))
                    details.append({"task": task, "instance_id": i, "logp_a": None,
                                    "logp_b": None, "pred": c, "gold": g})
                metrics[kind] = neqa.accuracy(chosen, golds)
                metrics[f"{kind}_unparsed"] = sum(c < 0 for c in chosen) / len(chosen)
            else:
                metrics[kind] = two_choice(task, k, prompts, golds, tuple(letters))
        if self.pairs is not None:
            originals = [o for o, _ in self.pairs]
            t1 = two_choice("neqa/task1", 0, [neqa.build_prompt(o, "zero_shot") for o in originals],
                            [o.answer for o in originals], tuple(letters))
            metrics["task1"] = t1
            for hint, task in ((False, "neqa/task2"), (True, "neqa/task2_hint")):
                made = [neqa.task2_prompt(o, n, i, hint) for i, (o, n) in enumerate(self.pairs)]
                s2 = two_choice(task, 0, [p for p, _ in made], [g for _, g in made], tuple(letters))
                metrics[task.split("/")[1]] = s2
                metrics["composed" + ("_hint" if hint else "")] = neqa.composed_accuracy(t1, s2)
        metrics["n"] = len(self.items)
        return preds, details, metrics

    headline = ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot", "composed")


# ================================================================================ TINaD
class TinadSuite(Suite):
    """True/False next-token protocol; the authors' scorer on the resulting predictions."""

    name = "tinad"

    def __init__(self, data: str | Path, conf: dict[str, Any], limit: int | None = None) -> None:
        super().__init__(conf)
        self.rows = tinad.load(data)[:limit]

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

    def token_ids(self, tokenizer) -> tuple[list[int], list[int]]:
        """First-token ids compared: every configured form of True and of False."""
        t = distinct_first_ids(tokenizer, list(self.conf.get("true_forms", [" True", "True"])))
        f = distinct_first_ids(tokenizer, list(self.conf.get("false_forms", [" False", "False"])))
        if set(t) & set(f):
            raise SuiteDataError("a True form and a False form share their first token for "
                                 "this tokenizer; choose other tinad.true_forms/false_forms")
        return t, f

    def evaluate(self, model, tokenizer, model_name: str, revision: str | None,
                 batch_size: int) -> tuple[list[dict], list[dict], dict[str, Any]]:
        t_ids, f_ids = self.token_ids(tokenizer)
        threshold = float(self.conf.get("threshold", 0.5))
        logp = next_token_logprobs(model, tokenizer, [tinad.prompt(r.sentence) for r in self.rows],
                                   token_ids=t_ids + f_ids, batch_size=batch_size, label="tinad")
        p = logp.double().exp()
        p_true, p_false = p[:, :len(t_ids)].sum(-1), p[:, len(t_ids):].sum(-1)
        score = (p_true / (p_true + p_false)).tolist()
        preds, details, scored = [], [], []
        for i, (row, s) in enumerate(zip(self.rows, score)):
            guess = s > threshold
            scored.append(dataclasses.replace(row, prediction=guess))
            for task in self._tasks_of(row):
                preds.append(prediction_row(model_name, revision, task, 0, i, str(guess),
                                            str(guess), guess == row.label))
            details.append({"instance_id": i, "p_true": float(p_true[i]),
                            "p_false": float(p_false[i]), "score": s, "prediction": guess,
                            "label": row.label})
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

    def __init__(self, data: str | Path, conf: dict[str, Any], limit: int | None = None) -> None:
        super().__init__(conf)
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

    def evaluate(self, model, tokenizer, model_name: str, revision: str | None,
                 batch_size: int) -> tuple[list[dict], list[dict], dict[str, Any]]:
        keys = quantifiers.keys_needed(self.comps)
        scores = continuation_logprobs(model, tokenizer, [c for c, _ in keys],
                                       [f" {w}" for _, w in keys], batch_size=batch_size,
                                       label="quantifiers")
        surprisal = {k: s.surprisal_bits(self.reduce) for k, s in zip(keys, scores)}
        details = [{"context": c, "word": w, "n_subwords": len(s.token_ids),
                    "surprisal_sum_bits": s.surprisal_bits("sum"),
                    "surprisal_mean_bits": s.surprisal_bits("mean")}
                   for (c, w), s in zip(keys, scores)]
        preds, correct = [], []
        for i, comp in enumerate(self.comps):
            ok, choice = comp.judge(surprisal)
            correct.append(ok)
            preds.append(prediction_row(model_name, revision, f"quantifiers/{comp.metric}", 0, i,
                                        choice, choice, ok))
        metrics = quantifiers.summarise(self.comps, correct)
        metrics["reduce"] = self.reduce
        return preds, details, metrics

    headline = ("earlier_most", "earlier_few", "exp1", "exp2", "control")
