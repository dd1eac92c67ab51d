"""The QA suite keyed by entity pairs (issue 41 item 5): a small QA file, a tiny corpus
counted by the real Spark job under the document unit, scripted answers of known
correctness through the generation path → ω, Δ and the bins equal a plain Python
computation; bad QA lines and counts of another unit are one line, exit 2."""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
import string
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from freqgap.cli import main as freqgap_main
from freqgap.errors import InputMismatchError
from freqgap.inference.fake import FakeLM
from freqgap.manifest import build_manifest, now_iso, read_manifest, write_manifest
from freqgap.suites import qa_items
from freqgap.suites.io import SuiteDataError
from freqgap.suites.qa import run_qa, write_count_inputs

SHOTS = 3
# (documents planting the fact, answered right?) per evaluated item: 22 seen pairs (enough
# for Δ at min_seen_keys = 20), two never planted, ties in ω, right answers commoner when ω
# is large but not only there.
PLAN = [(1, False), (1, True), (1, False), (2, False), (2, False), (3, True), (3, False),
        (4, False), (5, True), (6, False), (7, True), (8, True), (9, False), (10, True),
        (11, True), (12, True), (13, False), (14, True), (16, True), (17, True), (20, True),
        (25, True), (0, False), (0, True)]


def name(rng: random.Random) -> str:
    """An invented single-word entity: `Zorbiqua`-like."""
    return (rng.choice(string.ascii_uppercase)
            + "".join(rng.choice("aeiou" if i % 2 else "bdfgklmnprstvz") for i in range(6)))


PHRASE_AT = SHOTS + 9      # this item's answer is a two-word entity (a phrase of --terms)


def make_items(rng: random.Random) -> list[dict]:
    items = []
    for i in range(SHOTS + len(PLAN)):
        subject, answer = name(rng), name(rng)
        if i == PHRASE_AT:
            answer = f"Port {answer}"
        items.append({"id": f"q{i}", "question": f"What is the capital of {subject}?",
                      "answer": answer, "subject": subject, "answer_entity": answer,
                      "relation": "capital"})
    return items


def make_corpus(items: list[dict], rng: random.Random) -> list[str]:
    """Each evaluated item's fact in its planned number of documents, one entity alone in
    a few more (not relevant documents), and filler; shuffled."""
    docs = ["The weather was mild and the market was busy ."] * 5
    for item, (n, _) in zip(items[SHOTS:], PLAN):
        docs += [f"In the north , the capital of {item['subject']} is {item['answer_entity']}."
                 for _ in range(n)]
        docs.append(f"Travellers often mention {item['subject']} in passing .")
    rng.shuffle(docs)
    return docs


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return path


def scripted_loader(items: list[dict]):
    """FakeLM answering each evaluated question right or wrong as PLAN says (through the
    suite's own prompts and greedy generation)."""
    shots = [qa_items._item(it, Path("x"), 1) for it in items[:SHOTS]]
    answers = {}
    for it, (_, right) in zip(items[SHOTS:], PLAN):
        item = qa_items._item(it, Path("x"), 1)
        said = f" the {it['answer']}." if right else " Nowhere"
        answers[qa_items.prompt(shots, item)] = said + "\n"
    return lambda model, **_: FakeLM(model, answers=answers)


def plain_expectation(items: list[dict], docs: list[str], level: float = 0.95):
    """ω of every pair by a plain per-document scan (tokens with punctuation stripped,
    lower-cased; an entity is in a document when its tokens stand there in a row), per-key
    accuracy, Δ by the rank rule (SPEC §5: keys by ω then md5, 10 % bins) and the bins."""
    texts = [" " + " ".join(t.strip(string.punctuation).lower() for t in d.split()) + " "
             for d in docs]
    keys = {}
    for it, (_, right) in zip(items[SHOTS:], PLAN):
        pair = tuple(sorted((it["subject"].lower(), it["answer_entity"].lower())))
        omega = sum(1 for t in texts if f" {pair[0]} " in t and f" {pair[1]} " in t)
        keys[",".join(pair)] = (omega, float(right))
    seen = sorted(((w, hashlib.md5(k.encode()).hexdigest(), a) for k, (w, a) in keys.items()
                   if w > 0))
    m = math.ceil(len(seen) * 10 / 100)
    delta = (statistics.mean(a for *_, a in seen[-m:]) - statistics.mean(a for *_, a in seen[:m]))
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2)
    bins: dict[int, list[float]] = {}
    for w, a in keys.values():
        bins.setdefault(-1 if w == 0 else int(math.floor(math.log2(w) + 1e-12)), []).append(a)
    expected_bins = {}
    for b, acc in bins.items():
        n, p = len(acc), sum(acc) / len(acc)
        centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        expected_bins[b] = (n, p, (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n))
    return keys, delta, len(seen), expected_bins


@pytest.fixture(scope="module")
def qa_setup(tmp_path_factory):
    rng = random.Random(7)
    d = tmp_path_factory.mktemp("qa")
    items = make_items(rng)
    docs = make_corpus(items, rng)
    corpus = d / "corpus"
    corpus.mkdir()
    half = len(docs) // 2
    for part, texts in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:])):
        (corpus / part).write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return {"dir": d, "items": items, "docs": docs, "corpus": corpus,
            "path": write_items(d / "qa.jsonl", items)}


def test_count_inputs_are_the_evaluated_pairs_and_their_words(qa_setup, tmp_path, capsys):
    assert freqgap_main(["suite", "qa", "--data", str(qa_setup["path"]), "--count-inputs",
                         str(tmp_path / "ci")]) == 0
    assert "--unit document" in capsys.readouterr().out
    evaluated = qa_setup["items"][SHOTS:]
    pairs = (tmp_path / "ci" / "pairs.csv").read_text().splitlines()
    assert pairs[0] == "t1,t2" and len(pairs) == 1 + len(evaluated)
    want = sorted(tuple(sorted((it["subject"].lower(), it["answer"].lower()))) for it in evaluated)
    assert [tuple(p.split(",")) for p in pairs[1:]] == want
    entities = (tmp_path / "ci" / "entities.txt").read_text().split("\n")[:-1]
    assert entities == sorted({t for p in want for t in p})
    assert qa_items.entity_term("  St.   Louis, ") == "st louis"    # a phrase is one term
    assert qa_items.count_vocabulary(["new york", "1990", "zorbia"]) == ["zorbia"]
    assert qa_items.listed_terms(["new york", "1990", "zorbia"]) == ["new york", "zorbia"]
    assert any(" " in t for t in entities)


@pytest.fixture(scope="module")
def qa_counts(qa_setup, spark):
    """The real Spark job's document-unit count of the corpus, with the suite's inputs."""
    d = qa_setup["dir"]
    files = write_count_inputs(qa_setup["path"], d / "ci")
    counts = d / "counts"
    assert freqgap_main(["count", "--input", str(qa_setup["corpus"]), "--out", str(counts),
                         "--unit", "document", "--number-rule", "strip-punct",
                         "--terms", str(files["entities"]), "--pairs", str(files["pairs"])]) == 0
    return counts


def test_spark_document_counts_to_gaps_and_bins_equal_a_plain_computation(qa_setup, qa_counts):
    d = qa_setup["dir"]
    res = run_qa(qa_setup["path"], qa_counts, ["scripted"], d / "out",
                 loader=scripted_loader(qa_setup["items"]), boot_reps=50)
    keys, delta, n_seen, bins = plain_expectation(qa_setup["items"], qa_setup["docs"])
    assert n_seen == 22 and len(keys) == len(PLAN)
    per_key = pq.read_table(d / "out" / "gaps" / "per_key.parquet").to_pandas()
    assert dict(zip(per_key["key"], zip(per_key["omega"], per_key["accuracy"]))) == keys
    assert sorted(w for w, _ in keys.values()) == sorted(n for n, _ in PLAN)   # as planted
    g = res["gaps"].iloc[0]
    assert res["accuracy"]["scripted"] == pytest.approx(sum(r for _, r in PLAN) / len(PLAN))
    assert g["freq_def"] == "subject,answer" and g["n_keys"] == n_seen
    assert g["n_unseen_keys"] == 2 and g["delta"] == pytest.approx(delta)
    assert g["ci_low"] <= g["delta"] <= g["ci_high"]
    got = {int(r.bin): (int(r.n_rows), r.accuracy, r.ci_low, r.ci_high)
           for r in res["bins"].itertuples()}
    assert got.keys() == bins.keys()
    for b, (n, p, lo, hi) in bins.items():
        assert got[b][0] == n and got[b][1:] == pytest.approx((p, lo, hi))
    row = res["bins"].set_index("bin")
    assert (row.loc[-1, "lo"], row.loc[-1, "hi"], row.loc[3, "lo"], row.loc[3, "hi"]) == (0, 0, 8, 15)
    assert res["figure"].read_bytes()[:4] == b"\x89PNG"
    manifest = read_manifest(d / "out" / "qa", stage="suite_qa_bins")
    assert manifest["upstream"]["gaps"] == read_manifest(d / "out" / "gaps")["fingerprint"]


def test_cli_with_a_tiny_model_generates_greedily_and_prints_delta_and_bins(
        qa_setup, qa_counts, tiny_model_dir, tmp_path, capsys):
    """A real (tiny, untrained) transformer through `freqgap suite qa`: each prediction is
    the model's own greedy continuation of the prompt (the shots' cache changes nothing),
    judged by the stated rule; the command prints Δ and the bins and draws the figure."""
    from freqgap.inference.lm import GenerateRequest, get_lm

    out = tmp_path / "o"
    assert freqgap_main(["suite", "qa", "--data", str(qa_setup["path"]), "--models",
                         str(tiny_model_dir), "--out", str(out), "--counts", str(qa_counts),
                         "--device", "cpu", "--batch-size", "8"]) == 0
    printed = capsys.readouterr().out
    assert "Δ ×100 (top − bottom bin of pairs" in printed and "(22/2)" in printed
    assert "accuracy ×100 by relevant documents" in printed and "ω      8–15:" in printed
    assert (out / "qa" / "accuracy_by_documents.png").read_bytes()[:4] == b"\x89PNG"
    preds = pq.read_table(next((out / "predictions").glob("*/predictions.parquet"))).to_pylist()
    items = [qa_items._item(it, Path("x"), 1) for it in qa_setup["items"]]
    prompts = [qa_items.prompt(items[:SHOTS], it) for it in items[SHOTS:]]
    lm = get_lm(str(tiny_model_dir), device="cpu", batch_size=1)
    try:
        plain = lm.generate_until([GenerateRequest(p, max_new_tokens=16) for p in prompts])
    finally:
        lm.close()
    preds.sort(key=lambda r: r["instance_id"])
    assert [r["continuation"] for r in preds] == plain
    assert [r["correct"] for r in preds] == [qa_items.is_correct(t, it)
                                             for t, it in zip(plain, items[SHOTS:])]


def test_gaps_over_qa_instances_refuses_counts_of_another_unit(qa_setup, qa_counts, tmp_path,
                                                               capsys):
    """`freqgap gaps` on the suite's tables: the instances record the document unit."""
    import shutil

    from freqgap.suites.pipeline import run

    out = tmp_path / "o"
    run("qa", qa_setup["path"], ["scripted"], out, loader=scripted_loader(qa_setup["items"]))
    window = tmp_path / "window"
    shutil.copytree(qa_counts, window)
    manifest = json.loads((window / "_manifest.json").read_text())
    for key in ("unit", "max_unit_terms", "pairs"):
        del manifest["config"][key]
    del manifest["fingerprint"]
    write_manifest(window, manifest)
    argv = ["gaps", "--instances", str(out / "instances"), "--predictions",
            f"{out}/predictions/*/", "--boot-reps", "0"]
    assert freqgap_main(argv + ["--counts", str(window), "--out", str(tmp_path / "g1")]) == 2
    assert ("counts were made with unit='window' but the instances were made from counts "
            "with unit='document'") in capsys.readouterr().err
    assert freqgap_main(argv + ["--counts", str(qa_counts), "--out", str(tmp_path / "g2")]) == 0


def test_window_counts_are_refused_before_any_model(qa_setup, tmp_path):
    counts = tmp_path / "counts"
    counts.mkdir()
    cfg = {"window": 5, "max_order": 3, "number_rule": "strict", "max_digits": 6,
           "vocab": ["day"], "text_field": "text"}
    write_manifest(counts, build_manifest("count_terms", cfg, [], {}, now_iso(),
                                          plan_fingerprint=None, outputs={}))

    def never(*a, **k):
        raise AssertionError("a model was loaded although the counts are of the window unit")

    with pytest.raises(InputMismatchError, match=r"counted with the window unit.*--unit document"):
        run_qa(qa_setup["path"], counts, ["m"], tmp_path / "o", loader=never)
    cfg.update(unit="document", max_unit_terms=2000, pairs=[["abc", "day"]])
    write_manifest(counts, build_manifest("count_terms", cfg, [], {}, now_iso(),
                                          plan_fingerprint=None, outputs={}))
    with pytest.raises(InputMismatchError, match=r"pair list lacks 24 of the items' pairs"):
        run_qa(qa_setup["path"], counts, ["m"], tmp_path / "o", loader=never)
    del cfg["pairs"]
    write_manifest(counts, build_manifest("count_terms", cfg, [], {}, now_iso(),
                                          plan_fingerprint=None, outputs={}))
    with pytest.raises(InputMismatchError, match=r"is not a term of this count"):
        run_qa(qa_setup["path"], counts, ["m"], tmp_path / "o", loader=never)


GOOD = {"id": 1, "question": "Q?", "answer": "Bar", "subject": "Foo", "answer_entity": "Bar"}


@pytest.mark.parametrize("bad, message", [
    ({k: v for k, v in GOOD.items() if k != "answer_entity"}, "missing field 'answer_entity'"),
    ({**GOOD, "subject": 7}, "field 'subject' is 7 (number), not a string"),
    ({**GOOD, "answer": "  "}, "field 'answer' is empty"),
    ({**GOOD, "aliases": "Bar"}, "field 'aliases' is 'Bar', not a list"),
    ({**GOOD, "id": None}, "field 'id' is None"),
    ({**GOOD, "subject": "BAR "}, "subject and answer_entity are the same term 'bar'"),
    ({**GOOD, "id": 0}, "id '0' already on line 1"),
])
def test_a_bad_line_is_one_line_naming_file_and_line_exit_2(tmp_path, capsys, bad, message):
    lines = [{**GOOD, "id": 0}] + [{**GOOD, "id": i} for i in range(5, 9)]
    lines.insert(2, bad)
    path = write_items(tmp_path / "bad.jsonl", lines)
    assert freqgap_main(["suite", "qa", "--data", str(path), "--models", "m",
                         "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"bad.jsonl:3: {message}" in err
    assert not (tmp_path / "o").exists()


def test_judging_rule_and_prompt():
    item = qa_items.Item("1", 1, "What is the capital of Zorbia?", "Quellton", "Zorbia",
                         "Quellton", aliases=("Quell City",))
    for said, ok in ((" Quellton\nQ: more", True), (" the quellton.", True),
                     (" QUELL CITY!", True), (" Quellton city", False), (" \nQuellton", False),
                     ("", False)):
        assert qa_items.is_correct(said, item) is ok, said
    shot = qa_items.Item("0", 1, "Q0?", "A0", "s", "a")
    assert qa_items.prompt([shot], item) == "Q: Q0?\nA: A0\n\nQ: What is the capital of Zorbia?\nA:"
    with pytest.raises(SuiteDataError, match=r"the first 3 are the few-shot examples"):
        qa_items.split_shots([shot] * 3, 3, "f.jsonl")
