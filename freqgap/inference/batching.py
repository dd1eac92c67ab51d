"""Left-padded batches with explicit attention masks and position ids.

Decoder-only models generate from the right end of the input, so batches are padded on
the left. Position ids are given explicitly (counting real tokens only) so that a padded
row sees exactly the positions it would see alone: batched = unbatched. Shared by
generation (predictions) and log-prob scoring.
"""

from __future__ import annotations

from typing import Sequence

import torch


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int,
             device: str | torch.device | None = None,
             position_offset: int = 0) -> dict[str, torch.Tensor]:
    """Token id lists → `input_ids`, `attention_mask`, `position_ids` (B, T), left-padded.

    `position_offset` shifts the positions of every row (for inputs that continue a cached
    prefix of that many tokens).
    """
    if not sequences:
        raise ValueError("left_pad: no sequences")
    width = max(len(s) for s in sequences)
    if width == 0:
        raise ValueError("left_pad: every sequence is empty")
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if len(seq):
            ids[row, width - len(seq):] = torch.as_tensor(list(seq), dtype=torch.long)
            mask[row, width - len(seq):] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0) + position_offset
    out = {"input_ids": ids, "attention_mask": mask, "position_ids": positions}
    if device is not None:
        out = {k: v.to(device) for k, v in out.items()}
    return out


def encode_left_padded(tokenizer, texts: Sequence[str],
                       device: str | torch.device | None = None) -> dict[str, torch.Tensor]:
    """Tokenize `texts` (no special tokens added) and left-pad them with `left_pad`."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return left_pad(ids, pad_id, device=device)
