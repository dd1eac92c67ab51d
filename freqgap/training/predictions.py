"""Predictions recorded beside a committed checkpoint, and the check that reproduces them.

A fixed set of SPEC §3 multiplication prompts (k=2 shots, frequent and rare first
operands) is run through the model with the project's own inference path (greedy, at most
5 new tokens, stop at a newline); the continuations are stored in `predictions.json`. A
test reloads the directory offline and must get the same continuations. Prompts where a
greedy choice is a near tie (top-two logit margin under MIN_MARGIN) are not recorded: on
another CPU, float32 rounding could flip them and the test would fail for no fault.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from freqgap.config import load_conf

PREDICTIONS_FILE = "predictions.json"
MIN_MARGIN = 0.05


def mult_prompts(n: int = 40, seed: int = 0, k: int = 2) -> list[dict[str, Any]]:
    """`n` multiplication prompts in the format of conf/tasks.yaml, sharing k shots."""
    tasks = load_conf("tasks")
    question = tasks["tasks"]["mult"]["question"]
    lo, hi = tasks["tasks"]["mult"]["x2_range"]
    rng = random.Random(f"freqgap-recorded|{seed}")
    pairs = [(rng.randint(0, 99), rng.randint(lo, hi)) for _ in range(n + k)]
    shots, items = pairs[:k], pairs[k:]
    prefix = "".join(tasks["shot_template"].format(question=question.format(x1=a, x2=b), answer=a * b)
                     for a, b in shots)
    return [{"prefix": prefix,
             "prompt": prefix + tasks["test_template"].format(question=question.format(x1=a, x2=b)),
             "answer": str(a * b), "x1": a, "x2": b} for a, b in items]


def run_prompts(model_dir: str | Path, items: list[dict[str, Any]], max_new_tokens: int = 5) -> list[str]:
    """Greedy continuations on the CPU in float32, through the model interface
    (freqgap.inference.lm), the shared shots as prefix hint."""
    from freqgap.inference.lm import GenerateRequest, get_lm

    lm = get_lm(str(model_dir), device="cpu", dtype="float32", batch_size=64)
    try:
        return lm.generate_until([GenerateRequest(it["prompt"], max_new_tokens,
                                                  prefix=it["prefix"]) for it in items])
    finally:
        lm.close()


def greedy_margins(model_dir: str | Path, prompts: list[str], continuations: list[str]) -> list[float]:
    """Per prompt, the smallest top-1 − top-2 logit gap over its continuation's tokens."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    out = []
    for prompt, continuation in zip(prompts, continuations):
        p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        c_ids = tok(continuation, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([p_ids + c_ids])).logits[0]
        top2 = logits[len(p_ids) - 1: len(p_ids) - 1 + len(c_ids)].topk(2, dim=-1).values
        out.append(float((top2[:, 0] - top2[:, 1]).min()))
    return out


def record_predictions(model_dir: str | Path, n: int = 40) -> Path:
    """Write `predictions.json` (n prompts without near ties) into the model directory."""
    from freqgap.inference.parse import score
    from freqgap.manifest import atomic_write_text

    items = mult_prompts(3 * n)
    continuations = run_prompts(model_dir, items)
    margins = greedy_margins(model_dir, [it["prompt"] for it in items], continuations)
    rows = []
    for it, c, margin in zip(items, continuations, margins):
        if margin >= MIN_MARGIN and len(rows) < n:
            rows.append({"prompt": it["prompt"], "answer": it["answer"], "continuation": c,
                         "correct": score(c, it["answer"])["correct"], "margin": round(margin, 4)})
    doc = {"decoding": "greedy, max_new_tokens=5, stop at newline (freqgap.inference.generate)",
           "min_margin": MIN_MARGIN,
           "device": "cpu", "dtype": "float32", "items": rows}
    path = Path(model_dir) / PREDICTIONS_FILE
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def check_predictions(model_dir: str | Path) -> list[dict[str, str]]:
    """Rerun the recorded prompts; returns the mismatches (empty when reproduced)."""
    doc = json.loads((Path(model_dir) / PREDICTIONS_FILE).read_text(encoding="utf-8"))
    items = [{"prefix": it["prompt"][: it["prompt"].rfind("Q: ")], **it} for it in doc["items"]]
    got = run_prompts(model_dir, items)
    return [{"prompt": it["prompt"], "recorded": it["continuation"], "now": g}
            for it, g in zip(items, got) if g != it["continuation"]]
