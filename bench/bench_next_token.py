"""Benchmark: NeQA few-shot letter scoring with the shots' key/value cache vs full prompts.

Both runs call the model interface the suites use (`next_token_logprobs(prompts, [" A",
" B"], top_k=50)`), without and with `prefix=` (the prompts' shared header and three
shots, freqgap.suites.runner.shared_blocks), side by side, alternating, `--repeats` times
on the same loaded model; the median throughput (prompts/s) of each is reported with the
ratio, and the two are checked to agree (the same top-50 ids in the same order, log-probs
within 1e-5).

Prompts: the authors' few-shot prompt (freqgap.suites.neqa.build_prompt) over `--items`
questions made from the NeQA test fixture's questions, each with one of a few openers so
lengths vary. The default model is bench_inference's random GPT-NeoX (hidden 256, 4
layers), with a byte-level BPE tokenizer trained on these questions (2,000 tokens, so
words are mostly one token as with GPT-2's).

Run: .venv/bin/python bench/bench_next_token.py [--model DIR --device cuda]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from alternate import print_rates, time_alternating  # noqa: E402
from bench_inference import build_bench_model  # noqa: E402
from freqgap.inference.lm import get_lm  # noqa: E402
from freqgap.suites import neqa  # noqa: E402
from freqgap.suites.runner import shared_blocks  # noqa: E402
from tests.tiny_models import default_texts, train_tiny_tokenizer  # noqa: E402

OPENERS = ("", "In general,", "As far as we know,", "According to the science book,",
           "On a typical day in the middle of the summer,", "Most of the time,",
           "When the teacher asked the class a question about nature,")


def bench_prompts(n: int, seed: int = 0) -> list[str]:
    """`n` few-shot NeQA prompts over the fixture's questions with varied openers."""
    items = neqa.load(ROOT / "tests" / "fixtures" / "suites" / "neqa.jsonl")
    rng = random.Random(seed)
    out = []
    for i in range(n):
        it = items[i % len(items)]
        q = f"{rng.choice(OPENERS)} {it.question[0].lower()}{it.question[1:]}".strip()
        out.append(neqa.build_prompt(neqa.Item(it.line, q, it.choices, it.answer), "few_shot"))
    return out


def build_model(directory: Path, prompts: list[str]) -> Path:
    """bench_inference's random GPT-NeoX (256 x 4) with a tokenizer trained on the prompts."""
    return build_bench_model(directory, train_tiny_tokenizer(default_texts(200) + prompts[:50] * 4,
                                                             vocab_size=2000))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="alias or directory (default: build the bench model)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype")
    ap.add_argument("--items", type=int, default=200, help="prompts per run")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: stable figures on a busy machine)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    prompts = bench_prompts(args.items)
    prefix = shared_blocks(prompts)
    with tempfile.TemporaryDirectory(prefix="bench_next_token_") as tmp:
        model = args.model or str(build_model(Path(tmp) / "model", prompts))
        lm = get_lm(model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
        ids = neqa.letter_token_ids(lm, [" A", " B"])
        lengths = [len(t) for t in lm.encode_batch(prompts)]
        shots = len(lm.encode(prefix))
        runs = {"full prompts": "", "shots' cache reused": prefix}
        lm.next_token_logprobs(prompts[:args.batch_size], ids, top_k=50)     # warm-up
        times, results = time_alternating(
            {name: (lambda r, pre=pre: lm.next_token_logprobs(prompts, ids, top_k=50, prefix=pre))
             for name, pre in runs.items()}, args.repeats)
        plain, reused = (results[(args.repeats - 1, name)] for name in runs)
        same_top = all([t.id for t in a.top] == [t.id for t in b.top]
                       for a, b in zip(plain, reused))
        diff = max(abs(x - y) for a, b in zip(plain, reused)
                   for x, y in zip(a.candidates + tuple(t.logprob for t in a.top),
                                   b.candidates + tuple(t.logprob for t in b.top)))
        print(f"model: {model if args.model else 'random GPT-NeoX 256x4'} "
              f"({lm.num_parameters / 1e6:.1f}M parameters, {lm.device}, {lm.dtype}, "
              f"torch threads {torch.get_num_threads()}, batch {args.batch_size})")
        print(f"prompts: {len(prompts)} NeQA few-shot, {min(lengths)}-{max(lengths)} tokens "
              f"(shared shots {shots} tokens; reused for {lm.scoring_stats.reused // args.repeats} "
              f"prompts per run), {args.repeats} alternating repeats, median shown")
        base, fast = print_rates(times, len(prompts), 22).values()
        print(f"speed-up: {fast / base:.2f}x   same top-50 order: {same_top}   "
              f"max |delta log p|: {diff:.2e}")
        exact = lm.batch_invariant           # float32 on the CPU: must agree to 1e-5
        lm.close()
        if exact and (not same_top or diff > 1e-5):
            print("ERROR: results differ with and without the prefix", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
