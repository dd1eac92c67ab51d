"""Train a GPT-NeoX causal LM and its tokenizer on corpus shards; save a loadable directory.

The output directory loads offline with AutoModelForCausalLM/AutoTokenizer (safetensors
weights, config, tokenizer files) and carries `_manifest.json` with the settings, the
corpus files and checksums, the loss curve and the timing. It is written under a temporary
name and renamed when complete. Seeded: the same settings on the same device and thread
count give the same weights.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

from freqgap.counting.documents import iter_documents
from freqgap.counting.inputs import list_inputs
from freqgap.inference.checksums import weights_record
from freqgap.manifest import build_manifest, describe_local_inputs, now_iso, write_manifest
from freqgap.progress import Progress
from freqgap.training.data import PackedOrder, WindowSampler, encode_corpus, encode_documents
from freqgap.training.order import save_checkpoint, write_data_order
from freqgap.training.settings import TrainSettings
from freqgap.training.tokenizer import train_tokenizer


def pick_device(setting: str) -> str:
    import torch

    if setting == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return setting


def build_model(settings: TrainSettings, tokenizer):
    """A freshly initialised GPTNeoXForCausalLM sized by `settings.model`."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    config = GPTNeoXConfig(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
                           eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                           tie_word_embeddings=False, **settings.model)
    return GPTNeoXForCausalLM(config)


def lr_at(step: int, s: TrainSettings) -> float:
    """Linear warm-up, then cosine decay to lr * min_lr_ratio."""
    if step < s.warmup_steps:
        return s.lr * (step + 1) / s.warmup_steps
    frac = (step - s.warmup_steps) / max(1, s.steps - s.warmup_steps)
    return s.lr * (s.min_lr_ratio + (1 - s.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac)))


def _optimizer(model, s: TrainSettings):
    import torch

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": s.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=s.lr, betas=(0.9, 0.95))


def _replace_dir(tmp: Path, final: Path) -> None:
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    if old.exists():
        shutil.rmtree(old)


# Settings that change how a run goes, not the model it is meant to give: a rerun differing
# only in these replaces the model without --force (freqgap/outdir.py).
RUN_ONLY_SETTINGS = ("threads", "device", "log_every_s")


def _config(settings: TrainSettings, corpus: list[str]) -> dict[str, Any]:
    """The manifest's `config`: every setting and the corpus as given."""
    return {**settings.to_dict(), "corpus": [str(c) for c in corpus]}


def result_settings(settings: TrainSettings, corpus: list[str]) -> dict[str, Any]:
    """The recorded settings the model depends on (an --out holding a model of others is
    replaced only with --force)."""
    return {k: v for k, v in _config(settings, corpus).items() if k not in RUN_ONLY_SETTINGS}


def train_model(settings: TrainSettings, corpus: list[str], output: str | Path,
                progress: bool = True, command: str | None = None,
                on_batch=None) -> dict[str, Any]:
    """Train tokenizer and model on `corpus` (files, dirs, globs), save to `output`.

    `command`, when given, is the command line that ran this; it is written to
    COMMAND.txt and the manifest so a committed checkpoint says how it was made.
    With `checkpoints`, the weights after N steps go to `output/stepN/`; with the packed
    data order, `output/data_order/` records every sequence trained on
    (freqgap/training/order.py). `on_batch(step, batch)` sees each batch as trained on.
    """
    import torch

    started = now_iso()
    t_start = time.monotonic()
    output = Path(output)
    device = pick_device(settings.device)
    if device == "cpu":
        torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)

    files = [f.path for f in list_inputs([str(c) for c in corpus])]
    documents = list(iter_documents(files))
    texts = [text for _, _, text in documents]
    tokenizer = train_tokenizer(texts, settings.tokenizer["vocab_size"], settings.tokenizer["min_frequency"])
    if settings.data_order == "packed":
        doc_tokens = encode_documents(texts, tokenizer)
        n_tokens = sum(len(d) + 1 for d in doc_tokens)
        sampler = PackedOrder(doc_tokens, tokenizer.eos_token_id, settings.seq_len,
                              settings.batch_size, settings.seed)
    else:
        tokens = encode_corpus(texts, tokenizer)
        n_tokens = len(tokens)
        sampler = WindowSampler(tokens, settings.seq_len, settings.batch_size, settings.seed)
    del texts
    model = build_model(settings, tokenizer).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    opt = _optimizer(model, settings)
    setup_s = time.monotonic() - t_start

    meter = Progress(f"train {output.name}", total=settings.steps, unit="steps",
                     interval=settings.log_every_s) if progress else None
    tmp = output.with_name(f".{output.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    checkpoints = set(settings.checkpoints)
    batches = []                      # the packed order's sequences, for data_order/
    if 0 in checkpoints:
        save_checkpoint(model, tokenizer, tmp, 0)
    curve: list[dict[str, float]] = []
    ema = None
    t_loop = time.monotonic()
    model.train()
    for step in range(settings.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, settings)
        batch = sampler()
        if on_batch is not None:
            on_batch(step, batch.clone())
        if settings.data_order == "packed":
            batches.append(batch.numpy().copy())
        batch = batch.to(device)
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
        opt.step()
        value = float(loss.detach())
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss became {value} at step {step}; lower lr")
        ema = value if ema is None else 0.95 * ema + 0.05 * value
        curve.append({"step": step, "loss": round(value, 5)})
        if step + 1 in checkpoints:
            save_checkpoint(model, tokenizer, tmp, step + 1)
        if meter:
            meter.update(done=step + 1, extra=f"loss {ema:.3f}, lr {lr_at(step, settings):.2e}")
    loop_s = time.monotonic() - t_loop
    if meter:
        meter.update(done=settings.steps, extra=f"loss {ema:.3f}", force=True)

    order = write_data_order(tmp, batches, sampler, documents, tokenizer, settings) \
        if settings.data_order == "packed" else None
    model.eval()
    model.to("cpu").save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    totals = {
        "corpus_tokens": int(n_tokens), "parameters": int(n_params), "steps": settings.steps,
        "tokens_seen": settings.steps * settings.batch_size * settings.seq_len,
        "epochs": round(settings.steps * settings.batch_size * settings.seq_len / n_tokens, 3),
        "first_loss": curve[0]["loss"], "final_loss_ema": round(ema, 5),
        "setup_s": round(setup_s, 2), "train_s": round(loop_s, 2),
        "tokens_per_s": round(settings.steps * settings.batch_size * settings.seq_len / loop_s, 1),
    }
    manifest = build_manifest("train_lm", _config(settings, corpus),
                              describe_local_inputs(files, checksum=True), totals, started,
                              device=device, threads=settings.threads, loss_curve=curve,
                              **({"checkpoints": [f"step{c}" for c in settings.checkpoints]}
                                 if settings.checkpoints else {}),
                              **({"data_order": order} if order else {}))
    if command:
        manifest["command"] = command
        (tmp / "COMMAND.txt").write_text(
            "# The exact command that produced this directory (run from the repository root):\n"
            f"{command}\n", encoding="utf-8")
    manifest["weights"] = weights_record(tmp)    # checked whenever the model is loaded
    write_manifest(tmp, manifest)
    _replace_dir(tmp, output)
    return manifest
