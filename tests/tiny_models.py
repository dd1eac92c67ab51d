"""Tiny, randomly initialised causal LMs and a byte-level BPE tokenizer, built offline.

Tests must not download anything, yet they need real transformers models of the three
architectures the study uses (GPT-Neo, GPT-J, GPT-NeoX/Pythia). These helpers train a
small tokenizer with the `tokenizers` library and save a few-layer model from a config,
so every test exercises the same loading path (`from_pretrained` on a directory) as a
real checkpoint.
"""

from __future__ import annotations

import random
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (AutoModelForCausalLM, GPTJConfig, GPTNeoConfig, GPTNeoXConfig,
                          LlamaConfig, PreTrainedTokenizerFast)

EOS = "<|endoftext|>"
ARCHS = ("gpt_neo", "gptj", "gpt_neox")
# Llama-style (RMSNorm, RoPE, grouped-query attention): for the shared-prefix attention's
# tests, beside the three architectures the study uses.
LLAMA = "llama"
_UNITS = ("second", "minute", "hour", "day", "week", "month", "year", "decade")


def default_texts(n: int = 400, seed: int = 0) -> list[str]:
    """Few-shot style lines with digits, operators and time units to train on."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        a, b = rng.randint(0, 99), rng.randint(1, 50)
        kind = rng.randrange(4)
        if kind == 0:
            texts.append(f"Q: What is {a} times {b}?\nA: {a * b}\n\n")
        elif kind == 1:
            texts.append(f"Q: What is {a} plus {b}?\nA: {a + b}\n\n")
        elif kind == 2:
            texts.append(f"Q: What is {a} # {b}?\nA: {a * b}\n\n")
        else:
            u, v = rng.sample(_UNITS, 2)
            texts.append(f"Q: What is {a} {u}s in {v}s?\nA: {a * 60}\n\n")
    texts.append("The quick brown fox jumps over the lazy dog, 1,000 times; (23) $5 -5 2.5.")
    return texts


def train_tiny_tokenizer(texts: list[str] | None = None,
                         vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer (GPT-2 style pre-tokenisation) with eos = pad."""
    texts = default_texts() if texts is None else texts
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, bos_token=EOS,
                                   unk_token=EOS, pad_token=EOS)


def tiny_config(arch: str, vocab_size: int, eos_id: int, *, window_size: int = 256):
    """A few-layer config of `arch`; weights are scaled up so greedy argmaxes are not ties."""
    common = dict(vocab_size=vocab_size, bos_token_id=eos_id, eos_token_id=eos_id,
                  pad_token_id=eos_id, initializer_range=0.2)
    if arch == "gpt_neo":
        return GPTNeoConfig(hidden_size=48, num_layers=2, num_heads=4,
                            attention_types=[[["global", "local"], 1]],
                            window_size=window_size, max_position_embeddings=1024, **common)
    if arch == "gptj":
        return GPTJConfig(n_embd=48, n_layer=2, n_head=4, rotary_dim=8, n_positions=1024,
                          **common)
    if arch == "gpt_neox":
        return GPTNeoXConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=96, max_position_embeddings=1024,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "partial_rotary_factor": 0.25},
                             **common)
    if arch == LLAMA:
        return LlamaConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, intermediate_size=96,
                           max_position_embeddings=1024, **common)
    raise ValueError(f"unknown tiny architecture {arch!r}; known: {', '.join(ARCHS + (LLAMA,))}")


def build_tiny_model(arch: str, directory: Path, seed: int = 0, *,
                     tokenizer: PreTrainedTokenizerFast | None = None,
                     window_size: int = 256) -> Path:
    """Save a tiny random `arch` model plus tokenizer into `directory` (safetensors)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tiny_tokenizer() if tokenizer is None else tokenizer
    config = tiny_config(arch, len(tokenizer), tokenizer.eos_token_id, window_size=window_size)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory
