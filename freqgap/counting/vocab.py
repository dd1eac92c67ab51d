"""Vocabulary contradictions, refused before counting.

A token counts as a vocabulary word when it equals the word or the word plus "s" (SPEC §2:
the term is the singular). A vocabulary that holds both `day` and `days` makes `days` a
term of its own, so ω{day} silently loses every plural; such a list is refused instead.
"""

from __future__ import annotations

from typing import Iterable

from freqgap.config import ConfigError


def refuse_plural_forms(vocab: Iterable[str]) -> None:
    """ConfigError naming the first word that is another word's plural (word + "s")."""
    words = {w.lower() for w in vocab}
    for w in sorted(words):
        if w.endswith("s") and w[:-1] in words:
            raise ConfigError(f"vocabulary word {w!r} is the plural of {w[:-1]!r}, also in the "
                              f"vocabulary: {w!r} already counts as {w[:-1]!r} (SPEC §2: the "
                              f"term is the singular); remove {w!r} from --vocab or "
                              "conf/terms.yaml")
