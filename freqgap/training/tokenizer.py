"""A byte-level BPE tokenizer trained on the corpus, with digits kept apart.

Each digit is its own pre-token (a leading space may stay attached: " 414" → " 4" "1" "4"),
so numbers share their pieces and a product is spelt digit by digit, which keeps
arithmetic facts learnable by a tiny model; words merge as usual.
"""

from __future__ import annotations

from typing import Iterable

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

EOS = "<|endoftext|>"


def train_tokenizer(texts: Iterable[str], vocab_size: int, min_frequency: int = 2):
    """Train the tokenizer; returns a transformers fast tokenizer (eos = bos = pad = EOS)."""
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r" ?\d"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, bos_token=EOS,
                                   pad_token=EOS, unk_token=None, clean_up_tokenization_spaces=False)
