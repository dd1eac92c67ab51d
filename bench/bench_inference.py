"""Benchmark and GPU check: few-shot prediction with the shots' keys/values held once,
against the per-row copies, the study's full prompts and plain transformers `generate`.

On the same prompts (mult task, k shots, one seed), alternating, `--repeats` times after
a warm-up, on one loaded model:
  shared   `predict`, prefix reuse, shared-prefix attention (the default path)
  copies   `predict`, prefix reuse, the shots' K/V copied into every row (the path before)
  study    `predict`, full prompts, batch 50, no reuse (the study's way)
  generate plain transformers `generate`: left padding, batch 50, greedy, 5 new tokens
(`--runs` picks a subset). Printed per run: prompts/s (median), new tokens/s (suffix +
decoded tokens: what the model computes beyond the shared prefix), that rate's share of
the forward probe's (a plain forward pass, batch x 256 tokens, no cache: what the chip
reaches on this model), and peak memory (GPU: allocated, per run; CPU: the process's peak
RSS). Then the answers' agreement with `generate` and between the runs, and projections:
the paper grid (423,776 prompts) and a Pythia sweep (154 checkpoints x 8 sizes, the paper
grid each) at the shared path's rate. `--profile` adds torch profiler's top operators
of one shared-path run. The report becomes the `inference` section of bench/RESULTS.md
(bench/results_md.py: machine and commit named; `--results ''` for none, `--json` too).

Models: `--random-gptj 6b` (GPT-J-6B's architecture, random weights: the GPU check),
`--random-gptj 384x6` (a 384-wide, 6-layer GPT-J: the CPU figure), `--model` an alias or
directory, default a random GPT-NeoX of hidden 256 x 4 layers. A random model never stops
at a newline, so every item decodes its 5 tokens (the worst case).

GPU check (H200): .venv/bin/python bench/bench_inference.py --random-gptj 6b --device cuda
--items 2000 --repeats 2 --profile
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402

from results_md import RESULTS as RESULTS_MD  # noqa: E402
from results_md import machine, now_utc, source_commit, write_section  # noqa: E402

from freqgap.config import load_conf  # noqa: E402
from freqgap.instances import build_instances_dir, resolve_grid  # noqa: E402
from freqgap.inference.hf import HFCausalLM  # noqa: E402
from freqgap.inference.kvcache import shared_prefix_ids  # noqa: E402
from freqgap.inference.lm import get_lm  # noqa: E402
from freqgap.inference.parse import paper_answer  # noqa: E402
from freqgap.inference.predict import predict  # noqa: E402
from freqgap.inference.writer import part_files  # noqa: E402
from tests.instances.counts_fixture import default_counts  # noqa: E402
from tests.tiny_models import train_tiny_tokenizer  # noqa: E402

PAPER_GRID_PROMPTS = 423_776   # prompts of the paper grid for ~100 x1 values (see docs)
PYTHIA_CHECKPOINTS, PYTHIA_SIZES = 154, 8
RUNS = ("shared", "copies", "study", "generate")
GPTJ_SIZES = {"6b": {}, "384x6": dict(n_embd=384, n_layer=6, n_head=6, rotary_dim=32,
                                      initializer_range=0.2)}


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


def random_gptj(device: str, dtype: str | None, size: str = "6b") -> HFCausalLM:
    """GPT-J with random weights on `device` (GPTJConfig defaults = GPT-J-6B's
    architecture, or a smaller GPTJ_SIZES entry) and the tests' tiny tokenizer."""
    from transformers import AutoModelForCausalLM, GPTJConfig

    tok = train_tiny_tokenizer()
    cfg = GPTJConfig(bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                     pad_token_id=tok.eos_token_id, **GPTJ_SIZES[size],
                     **({"vocab_size": len(tok)} if size != "6b" else {}))
    torch_dtype = getattr(torch, dtype or ("bfloat16" if device.startswith("cuda") else "float32"))
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch_dtype)
    model.eval()
    return HFCausalLM(model, tok, name=f"gptj-{size}-random", model_id="random GPTJConfig",
                      revision="random")


def random_gptj_6b(device: str, dtype: str | None) -> HFCausalLM:
    """GPT-J-6B's architecture with random weights (../shared/gpu-check imports this)."""
    return random_gptj(device, dtype, "6b")


def _rows(directory: Path) -> list[dict]:
    t = pa.concat_tables(pq.read_table(f) for f in part_files(directory))
    return t.sort_by([(c, "ascending") for c in ("task", "k", "seed", "instance_id")]).to_pylist()


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _prompts(inst: Path) -> pa.Table:
    t = pa.concat_tables(pq.read_table(f) for f in sorted(inst.rglob("prompts*.parquet")))
    return t.sort_by([(c, "ascending") for c in ("task", "k", "seed", "instance_id")])


def suffix_tokens(lm, table: pa.Table) -> int:
    """Prompt tokens beyond each group's cached prefix (what the shared path computes)."""
    total = 0
    groups: dict[str, list[str]] = {}
    for prefix, prompt in zip(table.column("prefix").to_pylist(), table.column("prompt").to_pylist()):
        groups.setdefault(prefix, []).append(prompt)
    for prefix, prompts in groups.items():
        seqs = lm.encode_batch(prompts)
        shared = shared_prefix_ids(lm.encode(prefix), seqs) if prefix else []
        total += sum(len(s) - len(shared) for s in seqs)
    return total


def plain_generate(lm, prompts: list[str], batch: int, max_new: int = 5) -> list[str]:
    """What a user writes: left padding, greedy, `max_new` tokens, decoded continuations."""
    tok, model = lm.tokenizer, lm.model
    side, tok.padding_side = tok.padding_side, "left"
    out: list[str] = []
    try:
        with torch.inference_mode():
            for i in range(0, len(prompts), batch):
                enc = tok(prompts[i:i + batch], return_tensors="pt", padding=True,
                          add_special_tokens=False).to(lm.device)
                ids = model.generate(**enc, max_new_tokens=max_new, do_sample=False,
                                     pad_token_id=tok.pad_token_id)
                out += tok.batch_decode(ids[:, enc["input_ids"].shape[1]:],
                                        skip_special_tokens=True)
    finally:
        tok.padding_side = side
    return out


def forward_probe(lm, batch: int, tokens: int, repeats: int = 5) -> float:
    """Tokens/s of a plain forward pass (no cache, no padding): the reachable rate."""
    x = torch.randint(0, min(500, lm.model.config.vocab_size), (batch, tokens), device=lm.device)
    with torch.inference_mode():
        lm.model(input_ids=x, use_cache=False, logits_to_keep=1)
        _sync(lm.device)
        start = time.perf_counter()
        for _ in range(repeats):
            lm.model(input_ids=x, use_cache=False, logits_to_keep=1)
        _sync(lm.device)
    return batch * tokens * repeats / (time.perf_counter() - start)


def peak_memory(device: str) -> float:
    """GB: the GPU's peak allocated since the last reset, or the process's peak RSS."""
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 1e9
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def profile_top(call: Callable[[], object], device: str, rows: int = 15) -> str:
    """torch profiler's table of the top operators of one call (self device time)."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with profile(activities=acts) as prof:
        call()
        _sync(device)
    from torch.autograd.profiler_util import FunctionEventAvg

    key = "self_cpu_time_total"
    if device.startswith("cuda"):
        key = ("self_device_time_total" if hasattr(FunctionEventAvg, "self_device_time_total")
               else "self_cuda_time_total")
    return prof.key_averages().table(sort_by=key, row_limit=rows)


def device_name(device: str) -> str:
    """The GPU's name, or the CPU's (results_md.machine)."""
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(device)}, {os.cpu_count()} CPU cores"
    return machine()


def report_lines(args, model_name: str, lm, n: int, new_suffix: int, load_s: float,
                 probe: tuple[int, int, float], results: dict, agree: dict,
                 fast: float, grid_min: float, sweep_days: float) -> list[str]:
    """The report, in Markdown: printed, and the section of bench/RESULTS.md."""
    pb, pt, rate = probe
    gpu = args.device.startswith("cuda")
    lines = [f"Model: {model_name} ({lm.architecture}, {lm.num_parameters / 1e6:.1f}M "
             f"parameters, {lm.device}, {lm.dtype}, torch {torch.__version__}, "
             f"{torch.get_num_threads()} CPU threads). Prompts: {n} (mult, k={args.k}, one "
             f"seed), {new_suffix / n:.1f} tokens a prompt beyond the shared prefix; "
             f"{args.repeats} alternating repeats after a warm-up, medians; model ready in "
             f"{load_s:.2f} s.", "",
             f"Forward probe ({pb} x {pt} tokens, no cache): {rate:,.0f} tokens/s "
             f"({2 * lm.num_parameters * rate / 1e12:.2f} TFLOP/s at 2N FLOP a token).", "",
             "| run | prompts/s | new tokens/s | of the probe's rate | "
             + ("peak GPU GB (allocated)" if gpu else "peak RSS GB (process)")
             + " | x generate | answers = generate |", "|---|---:|---:|---:|---:|---:|---:|"]
    gen = results.get("generate", {}).get("prompts_per_s")
    for name, r in results.items():
        ratio = f"{r['prompts_per_s'] / gen:.1f}x" if gen else "-"
        lines.append(f"| {r['label']} | {r['prompts_per_s']:,.1f} | "
                     f"{r['new_tokens_per_s']:,.0f} | {r['share_of_forward']:.1%} | "
                     f"{r['peak_gb']:.2f} | {ratio} | {agree[name]}/{n} |")
    lines += ["", f"New tokens: the prompt tokens a run computes (beyond the shared prefix "
              f"with reuse, the whole prompt without) plus the decoded ones. "
              + ("Answers compared with plain generate's (paper rule)." if gen else
                 "Answers compared with the first run's."), "",
              f"Projection at {fast:,.0f} prompts/s (the shared run's, else the first run's; "
              f"k={args.k}, smaller k is faster): the paper grid "
              f"({PAPER_GRID_PROMPTS:,} prompts) in {grid_min:.1f} min; a Pythia sweep "
              f"({PYTHIA_CHECKPOINTS} checkpoints x {PYTHIA_SIZES} sizes, the grid each) in "
              f"{sweep_days:.1f} days at this model's rate (smaller models are faster)."]
    return lines


def load_model(args, tmp: Path):
    if args.random_gptj:
        return f"GPT-J {args.random_gptj}, random weights", random_gptj(args.device, args.dtype,
                                                                        args.random_gptj)
    model_dir = args.model or str(build_bench_model(tmp / "model"))
    return (args.model or "random GPT-NeoX, hidden 256 x 4 layers",
            get_lm(model_dir, device=args.device, dtype=args.dtype))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="alias or directory (default: build the bench model)")
    ap.add_argument("--random-gptj", choices=sorted(GPTJ_SIZES),
                    help="GPT-J with random weights: 6b (GPT-J-6B's architecture) or 384x6")
    ap.add_argument("--random-gptj-6b", dest="random_gptj", action="store_const", const="6b",
                    help="the same as --random-gptj 6b")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype")
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--items", type=int, default=150, help="test items (prompts) per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--reuse-batch-size", type=int,
                    help="batch of the reuse runs (default: the LM's, from memory on a GPU)")
    ap.add_argument("--runs", default=",".join(RUNS), help=f"a subset of {','.join(RUNS)}")
    ap.add_argument("--probe", default=None,
                    help="forward probe's batch x tokens (default 64x256 on a GPU, 8x256 on the CPU)")
    ap.add_argument("--profile", action="store_true", help="top operators of one shared run")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: stable figures on a busy machine)")
    ap.add_argument("--results", type=Path, default=RESULTS_MD,
                    help="Markdown file whose 'inference' section gets the report "
                         "(default bench/RESULTS.md; '' for none)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    runs = [r for r in args.runs.split(",") if r]
    if not runs or any(r not in RUNS for r in runs):
        print(f"bench_inference: --runs {args.runs!r}: use names from {','.join(RUNS)}",
              file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    gpu = args.device.startswith("cuda")
    started = now_utc()
    args.results = args.results if str(args.results) not in ("", ".") else None

    with tempfile.TemporaryDirectory(prefix="bench_inference_") as tmp:
        tmp = Path(tmp)
        conf = load_conf("tasks")
        grid = resolve_grid(conf, "paper", tasks=["mult"], ks=[args.k], seeds=[0],
                            max_test_items=args.items)
        build_instances_dir(default_counts(tmp / "counts"), tmp / "inst", grid, conf,
                            progress_interval=1e9)
        t0 = time.perf_counter()
        model_name, lm = load_model(args, tmp)
        _sync(args.device)
        t1 = time.perf_counter()
        table = _prompts(tmp / "inst")
        prompts = table.column("prompt").to_pylist()
        ids = table.column("instance_id").to_pylist()
        n = len(prompts)
        new_suffix = suffix_tokens(lm, table)
        reuse_batch = args.reuse_batch_size or lm.batch_size

        def freqgap_run(tag: str, reuse: bool, batch: int, shared: bool) -> Callable[[int], dict]:
            variant = lm.with_batch_size(batch)
            variant.shared_attention = shared      # ignored by code without the attribute

            def call(r: int) -> dict:
                out = tmp / f"run{r}-{tag}"
                predict(tmp / "inst", out, variant, label="bench", reuse_prefix=reuse,
                        progress_interval=1e9)
                rows = _rows(out)
                return {"answers": {x["instance_id"]: x["answer"] for x in rows},
                        "decoded": sum(len(lm.encode(x["continuation"])) for x in rows)}
            return call

        def generate_run(r: int) -> dict:
            conts = plain_generate(lm, prompts, 50)
            return {"answers": {i: paper_answer(c) for i, c in zip(ids, conts)},
                    "decoded": sum(len(lm.encode(c)) for c in conts)}

        jobs = {"shared": freqgap_run("shared", True, reuse_batch, True),
                "copies": freqgap_run("copies", True, reuse_batch, False),
                "study": freqgap_run("study", False, 50, True),
                "generate": generate_run}
        labels = {"shared": f"predict, reuse, shared-prefix attention (batch {reuse_batch})",
                  "copies": f"predict, reuse, per-row prefix copies (batch {reuse_batch})",
                  "study": "predict, no reuse (batch 50, the study's way)",
                  "generate": "plain transformers generate (left padding, batch 50)"}
        jobs = {name: jobs[name] for name in runs}
        for name, job in jobs.items():          # warm-up (allocator, kernels), not timed
            job(-1)
        times: dict[str, list[float]] = {name: [] for name in jobs}
        peaks: dict[str, float] = {}
        outputs: dict[str, dict] = {}
        for r in range(args.repeats):
            order = list(jobs) if r % 2 == 0 else list(reversed(jobs))
            for name in order:
                if gpu:
                    torch.cuda.reset_peak_memory_stats()
                _sync(args.device)
                start = time.perf_counter()
                outputs[name] = jobs[name](r)
                _sync(args.device)
                times[name].append(time.perf_counter() - start)
                peaks[name] = max(peaks.get(name, 0.0), peak_memory(args.device))
        pb, pt = (int(v) for v in (args.probe or ("64x256" if gpu else "8x256")).split("x"))
        probe = forward_probe(lm, pb, pt)

        n_params = lm.num_parameters
        results = {}
        for name in jobs:
            rate = n / statistics.median(times[name])
            computed = new_suffix if name in ("shared", "copies") else \
                sum(len(s) for s in lm.encode_batch(prompts))
            tokens_rate = rate * (computed + outputs[name]["decoded"]) / n
            results[name] = {"label": labels[name], "prompts_per_s": rate,
                             "new_tokens_per_s": tokens_rate,
                             "share_of_forward": tokens_rate / probe,
                             "peak_gb": peaks[name], "seconds": times[name]}
        base = outputs.get("generate") or outputs[next(iter(jobs))]
        agree = {name: sum(out["answers"][i] == base["answers"][i] for i in ids)
                 for name, out in outputs.items()}
        fast = results.get("shared", next(iter(results.values())))["prompts_per_s"]
        grid_min = PAPER_GRID_PROMPTS / fast / 60
        sweep_days = grid_min * PYTHIA_CHECKPOINTS * PYTHIA_SIZES / 60 / 24
        lines = report_lines(args, model_name, lm, n, new_suffix, t1 - t0, (pb, pt, probe),
                             results, agree, fast, grid_min, sweep_days)
        print("\n".join(lines))
        profile = None
        if args.profile and "shared" in jobs:
            profile = profile_top(lambda: jobs["shared"](99), args.device)
            print(profile)
            lines += ["", "Top operators of one shared run (torch profiler):", "", "```",
                      *profile.rstrip("\n").splitlines(), "```"]
        if args.results:
            write_section("inference", "Inference (`bench/bench_inference.py`)", lines,
                          command="python bench/bench_inference.py " + " ".join(argv or sys.argv[1:]),
                          machine=device_name(args.device), commit=source_commit(),
                          started=started, path=args.results)
            print(f"results: {args.results} (section inference)")
        if args.json:
            args.json.write_text(json.dumps({
                "model": model_name, "parameters": n_params, "device": lm.device,
                "dtype": lm.dtype, "k": args.k, "prompts": n, "runs": results,
                "forward_probe_tokens_per_s": probe, "agreement": agree,
                "paper_grid_minutes": grid_min, "pythia_sweep_days": sweep_days}, indent=1))
        ours = [outputs[name]["answers"] for name in ("shared", "copies", "study")
                if name in outputs]
        if lm.batch_invariant and any(a != ours[0] for a in ours):
            print("ERROR: float32 CPU answers differ between the predict runs", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
