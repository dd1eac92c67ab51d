"""The picture of what `freqgap count` counted: rank-frequency of numbers, word counts.

Read straight from the counts' Parquet with DuckDB (no full table in Python), so it works
on Pile-sized outputs too.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from freqgap.manifest import read_manifest


def number_frequencies(counts_dir: str | Path, limit: int = 100_000) -> list[tuple[str, int]]:
    """(term, ω) of the `limit` most frequent number terms, most frequent first."""
    read_manifest(counts_dir, stage="count_terms")
    glob = str(Path(counts_dir) / "unigrams" / "*.parquet")
    return duckdb.sql(
        f"SELECT term, count FROM read_parquet('{glob}') WHERE kind = 'number' "
        f"ORDER BY count DESC, term LIMIT {int(limit)}").fetchall()


def word_frequencies(counts_dir: str | Path) -> list[tuple[str, int]]:
    """(word, ω) of every vocabulary word counted."""
    glob = str(Path(counts_dir) / "unigrams" / "*.parquet")
    return duckdb.sql(f"SELECT term, count FROM read_parquet('{glob}') WHERE kind = 'word' "
                      "ORDER BY count DESC, term").fetchall()


def plot_counts(counts_dir: str | Path, out_png: str | Path) -> Path:
    """Two panels: log-log rank-frequency of numbers (with 0-99 marked), word counts as
    dots on a log axis (a word never seen is drawn at 1)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numbers = number_frequencies(counts_dir)
    words = word_frequencies(counts_dir)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    ranks = range(1, len(numbers) + 1)
    left.loglog(ranks, [c for _, c in numbers], ".", ms=2, color="tab:blue", label="all number terms")
    small = [(r, c) for r, (t, c) in zip(ranks, numbers) if len(t) <= 2 and (t == "0" or t[0] != "0")]
    if small:
        left.loglog(*zip(*small), "o", ms=3, color="tab:orange", label="0–99 (task operands)")
    left.set_xlabel("rank")
    left.set_ylabel("ω (occurrences)")
    left.set_title("Number terms: rank vs frequency")
    left.legend()
    if words:
        # a dot per word: a bar's length means nothing on a log axis (where would it start?)
        names, counts = [w for w, _ in words][::-1], [c for _, c in words][::-1]
        right.plot([max(c, 1) for c in counts], range(len(names)), "o", color="tab:green")
        right.set_yticks(range(len(names)), names)
        right.grid(axis="x", which="major", alpha=0.3)
    right.set_xscale("log")
    right.set_xlabel("ω (occurrences)")
    right.set_title("Vocabulary words")
    fig.tight_layout()
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return out_png
