"""Phrase benchmark: the count task with 100,000 listed phrase terms beside today's default
(numbers + time units), on real text (Debian documentation, bench/realtext.py), in one sitting.

Why its own script: the goal (issue 41) is a ratio, phrases' rate / the default's rate, on
the same files and machine, so both are measured in alternating rounds (a drift of a shared
machine's speed lands on both sides) and reported with the median of the per-round ratios.
Each rate is MB of uncompressed JSON Lines per CPU-second of the per-task code (read, zstd,
JSON, find terms, windows, sums by key) in a fresh process with the workers' environment,
as bench_count.py's "task code" measures it, the finder built before the clock starts; the
one-off cost of building a finder for 100,000 terms (per worker process) is reported apart.

The list is made from the text itself, so that most of its phrases do occur: the most
frequent word 2-, 3- and 4-grams of a sample of the corpus (normalized as SPEC §2 says),
a tenth single words of the text, and a fifth random phrases of the text's words.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_count import _cpu_seconds_in_fresh_processes, _mb, worker_environment  # noqa: E402
from realtext import ensure_realtext  # noqa: E402
from results_md import machine, now_utc, source_commit, write_section  # noqa: E402

from freqgap.config import ConfigError  # noqa: E402
from freqgap.counting.rules import TermRules  # noqa: E402
from freqgap.counting.sources import iter_lines  # noqa: E402

WORK = REPO / "out" / "bench"

# A worker process's first count (one record: its finder is built) and, timed after it, the
# per-task code over the files given; its rules are read from a file (100,000 terms are too
# long for one command-line argument). Prints both CPU-second figures, the counting's last.
TASK_CODE = (
    "import json, sys, time\n"
    "from freqgap.counting import partials\n"
    "from freqgap.counting.rules import TermRules\n"
    "from freqgap.counting.inputs import InputFile\n"
    "rules = TermRules.from_config(json.loads(open(sys.argv[1]).read()))\n"
    "t = time.process_time()\n"
    "list(partials.count_lines([(0, 1, b'{\"text\": \"5 hours 7\"}', False, None)], rules, 'fail', {0: 'x'}))\n"
    "build = time.process_time() - t\n"
    "inputs = [InputFile(i, f, 0, 0) for i, f in enumerate(sys.argv[2:])]\n"
    "t = time.process_time()\n"
    "for _ in partials.count_lines(partials.line_rows(inputs, rules.text_field, 'fail'), rules, 'fail',\n"
    "                              {f.index: f.path for f in inputs}):\n"
    "    pass\n"
    "print(build, time.process_time() - t)\n")
BUILD_CODE = TASK_CODE.split("inputs = ")[0] + "print(build)\n"


def sample_grams(files: list[Path], sample_docs: int) -> tuple[Counter, Counter]:
    """(word 2-4-grams, words) of the first `sample_docs` documents, normalized (SPEC §2)."""
    rules = TermRules()
    grams: Counter[tuple[str, ...]] = Counter()
    words: Counter[str] = Counter()
    docs = 0
    for f in files:
        for _, line in iter_lines(str(f)):
            tokens = [rules.normalize(t) for t in json.loads(line)["text"].split()]
            words.update(tokens)
            for n in (2, 3, 4):
                grams.update(zip(*(tokens[i:] for i in range(n))))
            docs += 1
            if docs >= sample_docs:
                return grams, words
    return grams, words


def phrase_list(grams: Counter, words: Counter, n_terms: int, frequent: bool, seed: int) -> list[str]:
    """`n_terms` listed terms of the sample: four fifths its n-grams (drawn at random from
    its distinct n-grams, so mostly rare ones, as entity names are; with `frequent`, its most
    frequent n-grams and, a tenth of the list, its most frequent words: nearly every token
    of the text becomes a term), one fifth random phrases of its 20,000 commonest words."""
    rules = TermRules()
    rng = random.Random(seed)
    terms: set[str] = set()

    def add(text: str) -> None:
        try:
            terms.add(rules.listed_term(text))
        except ConfigError:
            pass                       # a number, a vocabulary plural: not listable

    if frequent:
        for word, _ in words.most_common(n_terms // 10):
            add(word)
        ranked = [g for g, _ in grams.most_common()]
    else:
        ranked = sorted(grams)
        rng.shuffle(ranked)
    for gram in ranked:
        if len(terms) >= n_terms - n_terms // 5:
            break
        add(" ".join(gram))
    common = [w for w, _ in words.most_common(20_000)]
    while len(terms) < n_terms:
        add(" ".join(rng.choice(common) for _ in range(rng.randint(2, 4))))
    return sorted(terms)


def cpu_seconds(code: str, args: list[str], engine: str) -> float:
    """The last figure `code` prints, run in a fresh process with the workers' environment."""
    return _cpu_seconds_in_fresh_processes(code, [args], {**worker_environment(), "FREQGAP_ENGINE": engine})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--terms", type=int, default=100_000, help="listed terms (default: 100,000)")
    ap.add_argument("--files", type=int, default=8, help="real-text files counted per run (of 24)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default: 3)")
    ap.add_argument("--sample-docs", type=int, default=4000, help="documents the n-grams come from")
    ap.add_argument("--engine", default="numba", help="numba (the default engine) or numpy")
    ap.add_argument("--no-write", action="store_true", help="print only, leave bench/RESULTS.md")
    args = ap.parse_args()
    started = now_utc()
    ensure_realtext(WORK / "realtext")
    files = sorted((WORK / "realtext" / "small").glob("*.jsonl.zst"))[:args.files]
    mb = _mb(files)
    grams, words = sample_grams(sorted((WORK / "realtext" / "small").glob("*.jsonl.zst"))[::-1],
                                args.sample_docs)
    default = TermRules.from_conf()
    lists = {"sampled": phrase_list(grams, words, args.terms, False, seed=41),
             "frequent": phrase_list(grams, words, args.terms, True, seed=41)}
    rules = {"default": default, **{name: TermRules.from_config({**default.to_config(), "terms": terms})
                                    for name, terms in lists.items()}}
    with tempfile.TemporaryDirectory() as tmp:
        configs = {}
        for name, r in rules.items():
            configs[name] = Path(tmp) / f"{name}.json"
            configs[name].write_text(json.dumps(r.to_config()))
        rates: dict[str, list[float]] = {name: [] for name in rules}
        for r in range(args.rounds):
            names = list(rules)
            for name in names[r % len(names):] + names[:r % len(names)]:
                rates[name].append(mb / cpu_seconds(TASK_CODE, [str(configs[name]), *map(str, files)],
                                                    args.engine))
            print(f"round {r + 1}: " + ", ".join(f"{n} {v[-1]:.1f} MB/s" for n, v in rates.items()), flush=True)
        build = {name: cpu_seconds(BUILD_CODE, [str(configs[name])], args.engine) for name in configs}
    ratios = {name: [p / d for p, d in zip(rates[name], rates["default"])] for name in lists}
    median = {name: statistics.median(v) for name, v in rates.items()}
    phrases = {name: sum(" " in t for t in rules[name].terms) for name in lists}
    lines = [
        f"Real text ({len(files)} of the 24 small files of bench/realtext.py, {mb:.1f} MB of JSON "
        f"Lines), engine `{args.engine}`, count task code (read, zstd, JSON, terms, windows, sums; "
        f"W = 5, triples), {args.rounds} rounds in rotating order. Two lists of {args.terms:,} terms "
        f"from {args.sample_docs:,} documents of the corpus: *sampled*, its word 2-4-grams drawn "
        "at random from the distinct ones (mostly rare, as entity names are) and a fifth random "
        "phrases of its words; *frequent*, its most frequent n-grams and a tenth its most frequent "
        "words (the worst case: nearly every token becomes a term and windows fill).",
        "",
        "| rules | phrases listed | MB per CPU-second (median) | / default (median of rounds, range) |",
        "|---|---:|---:|---:|",
        f"| default (numbers + time units) | 0 | {median['default']:.1f} | 1 |",
        *(f"| default + {name} list | {phrases[name]:,} | {median[name]:.1f} | "
          f"{statistics.median(ratios[name]):.2f} ({min(ratios[name]):.2f}-{max(ratios[name]):.2f}) |"
          for name in lists),
        "",
        "Goal (issue 41): ≥ 0.50 of the default rate. A worker builds its finder once per rule set "
        "(fresh process, first record, CPU-s): " + ", ".join(f"{n} {b:.2f}" for n, b in build.items()) + ".",
    ]
    print("\n".join(lines))
    if not args.no_write:
        print(write_section("phrases", "Listed phrases (`bench/bench_phrases.py`)", lines,
                            command=" ".join(["python bench/bench_phrases.py", *sys.argv[1:]]),
                            machine=machine(), commit=source_commit(), started=started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
