"""End to end on the fixtures with tiny models: DATA.md tables, metrics, trends, plot, reuse."""

import json

import pyarrow.parquet as pq
import pytest
import yaml

from freqgap.config import load_conf
from freqgap.manifest import read_manifest
from freqgap.suites import tables
from freqgap.suites.pipeline import run, safe_name
from jobs.eval_suite import main

from tests.suites.conftest import FIXTURES, suite_texts


@pytest.fixture(scope="module")
def two_models(tiny_model_dir, tmp_path_factory):
    from tests.tiny_models import build_tiny_model, train_tiny_tokenizer

    other = build_tiny_model("gpt_neo", tmp_path_factory.mktemp("neo") / "gpt_neo", seed=1,
                             tokenizer=train_tiny_tokenizer(suite_texts(), vocab_size=700))
    return [str(tiny_model_dir), str(other)]


def check_common(out, models, tasks):
    inst = pq.read_table(out / "instances" / "instances.parquet")
    terms = pq.read_table(out / "instances" / "instance_terms.parquet")
    assert inst.schema.equals(tables.INSTANCES) and terms.schema.equals(tables.INSTANCE_TERMS)
    assert set(inst.column("task").to_pylist()) == set(tasks)
    vocab = yaml.safe_load((out / "instances" / "vocab.yaml").read_text())
    used = {t for col in ("t1", "t2", "t3") for t in terms.column(col).to_pylist() if t}
    assert set(vocab) == used and vocab == sorted(vocab)
    for m in models:
        d = out / "predictions" / safe_name(m)
        read_manifest(d)
        preds = pq.read_table(d / "predictions.parquet")
        assert preds.schema.equals(tables.PREDICTIONS)
        keys = set(zip(*(preds.column(c).to_pylist() for c in ("task", "instance_id"))))
        assert keys == set(zip(inst.column("task").to_pylist(),
                               inst.column("instance_id").to_pylist()))
    read_manifest(out / "summary")
    assert (out / "summary" / "scaling.png").read_bytes()[:4] == b"\x89PNG"
    return json.loads((out / "summary" / "trends.json").read_text())


# The fixture's questions have no trailing " ___ ?", so it ships no normalized files:
# Task 2 runs on the plain files by --task2-plain (never found silently), recorded.
PLAIN_TASK2 = {"task2_plain": True}


def test_neqa_end_to_end(two_models, tmp_path):
    out = tmp_path / "neqa"
    conf = load_conf("suites")
    conf["neqa"] = {**conf["neqa"], "cot_max_new_tokens": 24}
    res = run("neqa", FIXTURES / "neqa.jsonl", two_models, out,
              original=FIXTURES / "neqa_nonnegated.jsonl", conf=conf, batch_size=4,
              **PLAIN_TASK2)
    tasks = [f"neqa/{k}" for k in ("zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot",
                                   "task1", "task2", "task2_hint")]
    trend = check_common(out, two_models, tasks)
    assert set(trend["trends"]) <= {"zero_shot", "zero_shot_hint", "few_shot", "few_shot_cot",
                                    "composed"}
    for sub in ("instances", "summary"):
        assert read_manifest(out / sub)["config"]["task2_plain"] is True
    for rec in res["records"]:
        m = rec["metrics"]
        assert m["composed"] == pytest.approx(m["task1"] * m["task2"] +
                                              (1 - m["task1"]) * (1 - m["task2"]))
        preds = pq.read_table(out / "predictions" / safe_name(rec["model"]) /
                              "predictions.parquet").to_pylist()
        zs = [p for p in preds if p["task"] == "neqa/zero_shot"]
        assert m["zero_shot"] == pytest.approx(sum(p["correct"] for p in zs) / len(zs))
        assert {p["answer"] for p in zs} <= {"A", "B"}
        assert rec["parameters"] > 0
    # second run reuses the complete per-model results (same metrics, no reload)
    def no_loader(*a, **k):
        raise AssertionError("model reloaded although its results are complete")
    again = run("neqa", FIXTURES / "neqa.jsonl", two_models, out,
                original=FIXTURES / "neqa_nonnegated.jsonl", conf=conf, batch_size=4,
                **PLAIN_TASK2, loader=no_loader)
    assert [r["metrics"] for r in again["records"]] == [r["metrics"] for r in res["records"]]


def test_tinad_end_to_end_scores_like_the_scorer(tiny_model_dir, two_models, tmp_path):
    from freqgap.suites import tinad

    out = tmp_path / "tinad"
    res = run("tinad", FIXTURES / "tinad.jsonl", two_models, out, batch_size=4)
    trend = check_common(out, two_models, ["tinad/zero_shot", "tinad/affirmation",
                                           "tinad/negation"])
    assert set(trend["trends"]) == {"all", "all_affirmations", "all_negations", "coherence_all"}
    det = pq.read_table(out / "details" / f"{safe_name(two_models[0])}.parquet").to_pylist()
    assert all(abs(r["score"] - r["p_true"] / (r["p_true"] + r["p_false"])) < 1e-9 for r in det)
    # the predictions, written in the authors' predictions format, score identically
    rows = [json.loads(l) for l in (FIXTURES / "tinad.jsonl").read_text().splitlines()]
    pred_file = tmp_path / "p.jsonl"
    pred_file.write_text("".join(json.dumps({**r, "prediction": x["prediction"]}) + "\n"
                                 for r, x in zip(rows, det)))
    assert tinad.score_file(pred_file) == res["records"][0]["metrics"]


def test_tinad_token_forms(tiny_lm, tiny):
    from freqgap.suites.runner import TinadSuite

    model, tok = tiny
    spaced = TinadSuite(FIXTURES / "tinad.jsonl", {"true_forms": [" True"],
                                                   "false_forms": [" False"]})
    bare = TinadSuite(FIXTURES / "tinad.jsonl", {"true_forms": ["True"], "false_forms": ["False"]})
    both = TinadSuite(FIXTURES / "tinad.jsonl", {})
    (ts, fs), (tb, fb), (t2, f2) = (s.token_ids(tiny_lm) for s in (spaced, bare, both))
    assert ts == [tok(" True", add_special_tokens=False)["input_ids"][0]]
    assert tb == [tok("True", add_special_tokens=False)["input_ids"][0]]
    assert ts != tb and t2 == ts + tb and f2 == fs + fb


def test_quantifiers_end_to_end(tiny_model_dir, two_models, tmp_path):
    out = tmp_path / "q"
    res = run("quantifiers", FIXTURES / "quantifiers.csv", two_models, out)
    trend = check_common(out, two_models, ["quantifiers/earlier", "quantifiers/control",
                                           "quantifiers/exp1", "quantifiers/exp2"])
    assert set(trend["trends"]) == {"earlier_most", "earlier_few", "exp1", "exp2", "control"}
    m = res["records"][0]["metrics"]
    assert m["n_exp2"] == 8 and 0 <= m["exp2"] <= 1
    det = pq.read_table(out / "details" / f"{safe_name(two_models[0])}.parquet").to_pylist()
    assert all(r["surprisal_mean_bits"] == pytest.approx(r["surprisal_sum_bits"] / r["n_subwords"])
               for r in det)
    terms = pq.read_table(out / "instances" / "instance_terms.parquet").to_pylist()
    assert {"critical", "backbone,critical", "quantifier,critical"} <= {t["freq_def"] for t in terms}
    row = next(t for t in terms if t["freq_def"] == "backbone,critical")
    assert row["n_terms"] == 2 and row["t1"] <= row["t2"] and row["t3"] is None


def test_neqa_authors_files_end_to_end(tiny_model_dir, tmp_path):
    """The authors' layout (normalized siblings found), sampled, both scorings; the
    predictions manifest names the instances it was made from."""
    auth = FIXTURES / "neqa_authors"
    runs = {}
    for scoring in ("top50", "full"):
        out = tmp_path / scoring
        res = run("neqa", auth / "neqa_3.jsonl", [str(tiny_model_dir)], out,
                  original=auth / "obqa_3.jsonl", sample=2, seed=42, letter_scoring=scoring,
                  conf={**load_conf("suites"), "neqa": {**load_conf("suites")["neqa"],
                                                        "cot_max_new_tokens": 8}})
        inst = read_manifest(out / "instances", stage="suite_instances")
        assert inst["config"]["task2_files"] == [str(auth / "neqa_3_normalized.jsonl"),
                                                 str(auth / "obqa_3_normalized.jsonl")]
        assert {i["path"] for i in inst["inputs"]} >= set(inst["config"]["task2_files"])
        assert inst["totals"]["instances"] == 7 * 2
        pred = read_manifest(out / "predictions" / safe_name(str(tiny_model_dir)),
                             stage="suite_predictions", upstream={"instances": inst["fingerprint"]})
        assert pred["model"]["weights_sha256"]
        runs[scoring] = res["records"][0]["metrics"]
        assert runs[scoring]["letter_scoring"] == scoring
    # the two rules differ only where both letters are outside the top 50
    outside = runs["top50"]["both_letters_outside_top50"]
    if not any(outside.values()):
        for k in ("zero_shot", "few_shot", "task1", "task2"):
            assert runs["top50"][k] == runs["full"][k]


def test_job_reports_bad_file(tmp_path, capsys):
    rc = main(["neqa", "--data", str(FIXTURES / "neqa_bad.jsonl"), "--models", "x",
               "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "neqa_bad.jsonl:2: missing field 'answer'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()     # refused before writing: no empty --out left


def test_frequency_gaps_over_reference_counts(tiny_model_dir, tmp_path):
    """Counts of a small corpus (the project's reference counter, with the run's vocab.yaml)
    feed the DuckDB gap machinery over the suite's tables."""
    import pyarrow as pa

    from freqgap.counting.reference import count_texts
    from freqgap.counting.rules import TermRules, read_vocab_file
    from freqgap.manifest import build_manifest, now_iso, write_manifest
    from freqgap.suites.pipeline import frequency_gaps

    out = tmp_path / "q"
    run("quantifiers", FIXTURES / "quantifiers.csv", [str(tiny_model_dir)], out)
    vocab = read_vocab_file(out / "instances" / "vocab.yaml")
    assert {"crop", "worm", "farmer", "few", "most"} <= set(vocab)
    rules = TermRules(vocab=tuple(vocab))
    corpus = (["Farmers grow crops in spring ."] * 8 + ["most gardeners plant flowers ."] * 3 +
              ["few worms and rocks"] * 1 + ["Gardeners plant rocks ?"] * 2)
    ref = count_texts(corpus, rules)
    counts = tmp_path / "counts"
    (counts / "unigrams").mkdir(parents=True)
    (counts / "pairs").mkdir()
    (counts / "triples").mkdir()
    pq.write_table(pa.table({"term": list(ref.unigrams), "kind": ["word"] * len(ref.unigrams),
                             "count": list(ref.unigrams.values())}),
                   counts / "unigrams" / "part-0.parquet")
    pq.write_table(pa.table({"t1": [k[0] for k in ref.pairs], "t2": [k[1] for k in ref.pairs],
                             "count": list(ref.pairs.values())}), counts / "pairs" / "part-0.parquet")
    pq.write_table(pa.table({"t1": [k[0] for k in ref.triples], "t2": [k[1] for k in ref.triples],
                             "t3": [k[2] for k in ref.triples],
                             "count": list(ref.triples.values())}),
                   counts / "triples" / "part-0.parquet")
    cfg = {"window": 5, "max_order": 3, "number_rule": "strict", "max_digits": 6,
           "vocab": list(rules.vocab), "text_field": "text"}
    write_manifest(counts, build_manifest("count_terms", cfg, [], {}, now_iso(),
                                          plan_fingerprint=None, outputs={}))
    result = frequency_gaps("quantifiers", out, counts, boot_reps=20)
    read_manifest(out / "gaps")
    per_key = result.per_key
    assert set(per_key["task"]) == {"quantifiers/earlier", "quantifiers/control",
                                    "quantifiers/exp1", "quantifiers/exp2"}
    crit = per_key[(per_key["task"] == "quantifiers/exp2") & (per_key["freq_def"] == "critical")]
    omega = dict(zip(crit["key"], crit["omega"]))
    assert omega["crop"] == ref.unigrams["crop"] == 8 and omega["worm"] == 1
    pair = per_key[(per_key["task"] == "quantifiers/exp2") &
                   (per_key["freq_def"] == "backbone,critical")]
    assert dict(zip(pair["key"], pair["omega"]))["crop,farmer"] == 8
    assert not result.gaps.empty
