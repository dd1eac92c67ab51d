"""Benchmark: prefix KV-cache reuse vs the study's way (full prompts, batch 50, no reuse).

Both runs go through the same prediction job (freqgap.inference.predict.predict) on the
same prompts (k=16, one seed, mult task), side by side, alternating, `--repeats` times;
the median steady-state throughput (prompts/s, model already loaded) of each is reported
with the ratio, and the predictions are asserted identical. Fixed start-up costs (model
build/load) are reported separately.

The default model is "tiny but not trivial": a random GPT-NeoX of hidden 256, 4 layers
(~3.5M parameters) with a byte-level BPE tokenizer that gives ~250-token prompts at k=16,
as GPT-2's tokenizer does. `--model` runs any alias or directory instead (for example
`--model gpt-j-6b --device cuda` on a GPU machine with the weights cached).

Run: make bench-inference   (or: .venv/bin/python bench/bench_inference.py --help)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import print_rates, time_alternating  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402

from freqgap.config import load_conf  # noqa: E402
from freqgap.instances import build_instances_dir, resolve_grid  # noqa: E402
from freqgap.inference.hf import HFCausalLM  # noqa: E402
from freqgap.inference.lm import get_lm  # noqa: E402
from freqgap.inference.predict import predict  # noqa: E402
from freqgap.inference.writer import part_files  # noqa: E402
from tests.instances.counts_fixture import default_counts  # noqa: E402
from tests.tiny_models import train_tiny_tokenizer  # noqa: E402

PAPER_GRID_PROMPTS = 423_776   # prompts of the paper grid for ~100 x1 values (see docs)


def build_bench_model(directory: Path, tok=None) -> Path:
    """A random GPT-NeoX, hidden 256 x 4 layers, saved with `tok` (default: the tiny
    tokenizer)."""
    from transformers import AutoModelForCausalLM, GPTNeoXConfig

    tok = tok or train_tiny_tokenizer()
    cfg = GPTNeoXConfig(vocab_size=len(tok), hidden_size=256, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=1024,
                        max_position_embeddings=2048, bos_token_id=tok.eos_token_id,
                        eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id,
                        initializer_range=0.1)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def random_gptj_6b(device: str, dtype: str | None):
    """GPT-J-6B's architecture (GPTJConfig defaults) with random weights, on `device`.

    For timing only, where the weights are not cached: the compute per token is that of
    GPT-J-6B; a random model never stops at a newline, so every item decodes 5 tokens
    (the worst case)."""
    from transformers import AutoModelForCausalLM, GPTJConfig

    tok = train_tiny_tokenizer()
    cfg = GPTJConfig(bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                     pad_token_id=tok.eos_token_id)
    torch_dtype = getattr(torch, dtype or ("bfloat16" if device.startswith("cuda") else "float32"))
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch_dtype)
    model.eval()
    return HFCausalLM(model, tok, name="gptj-6b-random", model_id="random GPTJConfig()",
                      revision="random")


def _rows(directory: Path) -> list[dict]:
    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in ("task", "k", "seed", "instance_id")]).to_pylist()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="alias or directory (default: build the bench model)")
    ap.add_argument("--random-gptj-6b", action="store_true",
                    help="time GPT-J-6B's architecture with random weights (no download)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype")
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--items", type=int, default=150, help="test items (prompts) per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--reuse-batch-size", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: stable figures on a busy machine)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory(prefix="bench_inference_") as tmp:
        tmp = Path(tmp)
        conf = load_conf("tasks")
        grid = resolve_grid(conf, "paper", tasks=["mult"], ks=[args.k], seeds=[0],
                            max_test_items=args.items)
        build_instances_dir(default_counts(tmp / "counts"), tmp / "inst", grid, conf,
                            progress_interval=1e9)
        t0 = time.perf_counter()
        if args.random_gptj_6b:
            model_dir = "GPT-J-6B architecture, random weights"
            t1 = time.perf_counter()
            loaded = random_gptj_6b(args.device, args.dtype)
        else:
            model_dir = args.model or str(build_bench_model(tmp / "model"))
            t1 = time.perf_counter()
            loaded = get_lm(model_dir, device=args.device, dtype=args.dtype)
        t2 = time.perf_counter()
        n_params = loaded.num_parameters
        runs = {"study (full prompts, batch 50, no reuse)": (False, 50),
                f"prefix reuse (batch {args.reuse_batch_size})": (True, args.reuse_batch_size)}
        # Warm-up (allocator, kernels), not timed.
        predict(tmp / "inst", tmp / "warm", loaded, label="bench", progress_interval=1e9)

        def job(name: str, reuse: bool, batch: int) -> Callable[[int], tuple[Path, dict]]:
            def call(r: int) -> tuple[Path, dict]:
                out = tmp / f"run{r}-{name[:5]}"
                return out, predict(tmp / "inst", out, loaded.with_batch_size(batch),
                                    label="bench", reuse_prefix=reuse, progress_interval=1e9)
            return call

        times, outputs = time_alternating({name: job(name, *run) for name, run in runs.items()},
                                          args.repeats)
        results = {key: _rows(out) for key, (out, _) in outputs.items()}
        manifest = list(outputs.values())[-1][1]
        n = manifest["totals"]["rows"]
        tokens = manifest["totals"]["longest_prompt_tokens"]
        first = next(iter(results.values()))
        identical = all(rows == first for rows in results.values())
        print(f"model: {model_dir} ({loaded.architecture}, {n_params / 1e6:.1f}M parameters, "
              f"{loaded.device}, {loaded.dtype}, torch threads {torch.get_num_threads()})")
        print(f"prompts: {n} (mult, k={args.k}, longest {tokens} tokens), "
              f"{args.repeats} alternating repeats, median shown")
        print(f"start-up: build model {t1 - t0:.2f} s, load model {t2 - t1:.2f} s "
              "(once per run, not in the rates)")
        base, fast = print_rates(times, n, 45).values()
        print(f"speed-up: {fast / base:.1f}x   identical predictions: {identical}")
        print(f"full paper grid (~{PAPER_GRID_PROMPTS:,} prompts) at this k=16 rate: "
              f"{PAPER_GRID_PROMPTS / fast / 60:.1f} min with reuse vs "
              f"{PAPER_GRID_PROMPTS / base / 60:.1f} min without (upper bound: smaller k is faster)")
        if not identical:
            print("ERROR: predictions differ between runs", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
