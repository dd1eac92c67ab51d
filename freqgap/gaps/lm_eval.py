"""Import lm-evaluation-harness `--log_samples` logs as predictions (docs/DATA.md).

lm-eval writes one `samples_<task>_<date>.jsonl` per task, a JSON object per document with
`doc_id`, `doc`, `target`, `arguments` (the prompt), `resps` (the raw generations),
`filtered_resps`, `filter` and the metrics. For a task in this project's format the
generation is scored here by the paper rule (freqgap.inference.parse), against the answer of
the instance whose question text matches, so the gaps of imported and native predictions
mean the same thing. The harness's own metric is kept only in the manifest's totals.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from freqgap.gaps.inputs import GapsInputError, dataset_glob
from freqgap.inference.parse import score
from freqgap.inference.writer import PREDICTION_SCHEMA
from freqgap.contract import INSTANCE_STAGES
from freqgap.jsonl import iter_json_objects
from freqgap.manifest import (MANIFEST_NAME, build_manifest, describe_local_inputs, now_iso,
                              read_manifest, write_manifest)

_QUESTION = re.compile(r"Q: (.*?)\nA:", re.S)
_SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


class LmEvalImportError(GapsInputError):
    """A log line cannot be imported; the message names the file and line."""


def load_questions(instances_dir: Path) -> dict[str, list[tuple[str, int, str]]]:
    """question text -> [(task, instance_id, answer)] from instances/instances.parquet."""
    read_manifest(instances_dir, stage=INSTANCE_STAGES)
    path = dataset_glob(instances_dir, "instances")
    if path is None:
        raise GapsInputError(f"{instances_dir}: no instances.parquet")
    con = duckdb.connect()
    rows = con.execute("SELECT question, task, instance_id, answer FROM read_parquet(?)",
                       [path]).fetchall()
    con.close()
    out: dict[str, list[tuple[str, int, str]]] = {}
    for q, task, iid, answer in rows:
        out.setdefault(q, []).append((task, int(iid), answer))
    return out


def prompt_text(sample: dict[str, Any]) -> str | None:
    """The prompt lm-eval sent: arguments.gen_args_0.arg_0 (current) or arguments[0][0]."""
    args = sample.get("arguments")
    if isinstance(args, dict):
        first = args.get("gen_args_0") or next(iter(args.values()), None)
        if isinstance(first, dict):
            first = first.get("arg_0")
        return first if isinstance(first, str) else None
    if isinstance(args, list) and args:
        first = args[0]
        if isinstance(first, (list, tuple)) and first:
            first = first[0]
        return first if isinstance(first, str) else None
    return None


def generation(sample: dict[str, Any]) -> str | None:
    """The raw generated text: resps[0][0] (or resps[0]) when it is a string."""
    resps = sample.get("resps")
    if isinstance(resps, list) and resps:
        first = resps[0]
        if isinstance(first, list) and first:
            first = first[0]
        if isinstance(first, str):
            return first
    return None


def question_of(sample: dict[str, Any], field: str | None) -> str | None:
    """The test question: doc[field], doc['question'], or the last `Q: …\\nA:` of the prompt."""
    doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
    for name in ([field] if field else []) + ["question"]:
        if isinstance(doc.get(name), str):
            return doc[name].strip()
    prompt = prompt_text(sample)
    if prompt:
        found = _QUESTION.findall(prompt)
        if found:
            return found[-1].strip()
    return None


def results_file_of(samples_path: Path) -> Path | None:
    """The results_<date>.json that lm-eval wrote in the same run as samples_<task>_<date>.jsonl
    (the same timestamp), or None. Another results_*.json in the folder belongs to another run
    (another n-shot, model or filter) and is never used."""
    m = _SAMPLES_NAME.match(samples_path.name)
    if not m:
        return None
    path = samples_path.with_name(f"results_{m.group(2)}.json")
    return path if path.is_file() else None


def shots_from_results(results_path: Path, lm_task: str) -> int | None:
    """k: the `n-shot` of lm_task in one results_<date>.json; an unreadable file is an error."""
    try:
        data = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LmEvalImportError(f"{results_path}: cannot read the results file ({exc}); it "
                                "gives the number of shots, or pass --k") from exc
    n = (data.get("n-shot") or {}).get(lm_task) if isinstance(data, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def read_samples(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """(line number, sample) for each non-empty line, with errors naming file and line."""
    return iter_json_objects(path, LmEvalImportError)


def _shots(path: Path, lm_task: str, k: int | None) -> tuple[int, str, Path | None]:
    """(k, where it came from, the results file of the same run) for one samples file.

    --k wins but must agree with the run's results file when there is one."""
    results = results_file_of(path)
    n_shot = shots_from_results(results, lm_task) if results else None
    if k is not None:
        if n_shot is not None and n_shot != k:
            raise LmEvalImportError(f"{results}: n-shot of {lm_task!r} is {n_shot}, but --k is "
                                    f"{k}; drop --k or import the right run")
        return k, "--k", results
    if n_shot is None:
        where = results or path.with_name("results_<same timestamp>.json")
        raise LmEvalImportError(f"{path}: number of shots unknown: {where} "
                                f"{'has no n-shot for ' + repr(lm_task) if results else 'not found'}"
                                "; pass --k")
    return n_shot, str(results.name), results


def import_samples(files: list[Path], instances_dir: Path, out_dir: Path, model: str,
                   revision: str = "", task: str | None = None, k: int | None = None,
                   seed: int = 0, question_field: str | None = None,
                   filter_name: str | None = None) -> dict[str, Any]:
    """Convert lm-eval sample logs into predictions/<model>/ (Parquet + manifest).

    Every sample must match exactly one instance (by question text; `task` disambiguates
    tasks that share a question, such as mult_hash and add_hash), the harness's target
    must equal that instance's answer, and no (task, k, seed, instance) may repeat.
    """
    started = now_iso()
    questions = load_questions(instances_dir)
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, int, int, int], str] = {}
    harness_metric: dict[str, list[float]] = {}
    per_file: list[dict[str, Any]] = []
    results_files: list[Path] = []
    for path in files:
        m = _SAMPLES_NAME.match(path.name)
        lm_task = m.group(1) if m else path.stem
        shots, shots_from, results = _shots(path, lm_task, k)
        if results and results not in results_files:
            results_files.append(results)
        chosen_filter = filter_name
        for lineno, sample in read_samples(path):
            where = f"{path}:{lineno}"
            f = sample.get("filter")
            if f is not None:
                chosen_filter = chosen_filter or f
                if f != chosen_filter:
                    continue
            text = generation(sample)
            if text is None:
                raise LmEvalImportError(f"{where}: resps holds no generated text (only generation "
                                   "tasks, output_type generate_until, can be imported)")
            q = question_of(sample, question_field)
            if q is None:
                raise LmEvalImportError(f"{where}: no question found (doc.question, or 'Q: …\\nA:' "
                                   "in the prompt); pass --question-field")
            cands = [c for c in questions.get(q, []) if task is None or c[0] == task]
            if not cands:
                raise LmEvalImportError(f"{where}: question {q!r} matches no instance in "
                                   f"{instances_dir}" + (f" of task {task}" if task else ""))
            if len({c[0] for c in cands}) > 1:
                raise LmEvalImportError(f"{where}: question {q!r} occurs in tasks "
                                   f"{sorted({c[0] for c in cands})}; pass --task")
            if len(cands) > 1:
                raise LmEvalImportError(f"{where}: question {q!r} matches {len(cands)} instances")
            inst_task, iid, answer = cands[0]
            target = sample.get("target")
            if target is not None and str(target).strip() != answer:
                raise LmEvalImportError(f"{where}: target {target!r} differs from the instance's "
                                   f"answer {answer!r} (task {inst_task}, instance {iid})")
            key = (inst_task, int(shots), int(seed), iid)
            if key in seen:
                raise LmEvalImportError(f"{where}: a second sample for task {inst_task}, k={shots}, "
                                   f"seed={seed}, instance {iid} (first at {seen[key]})")
            seen[key] = where
            for metric in ("exact_match", "acc"):
                if isinstance(sample.get(metric), (int, float)):
                    harness_metric.setdefault(metric, []).append(float(sample[metric]))
            rows.append({"model": model, "revision": revision, "task": inst_task, "k": int(shots),
                         "seed": int(seed), "instance_id": iid, "continuation": text,
                         **score(text, answer)})
        per_file.append({"file": str(path), "lm_task": lm_task, "k": int(shots),
                         "k_from": shots_from, "filter": chosen_filter,
                         "results_file": str(results) if results else None})
    if not rows:
        raise LmEvalImportError(f"{', '.join(map(str, files))}: no samples to import")
    out_dir.mkdir(parents=True, exist_ok=True)
    target_file = out_dir / "part-lm-eval.parquet"
    others = [p for p in out_dir.rglob("*.parquet") if p != target_file]
    if others:
        raise LmEvalImportError(f"{out_dir}: already holds other predictions ({others[0].name}); "
                                "import into a directory of its own")
    # a rerun over a finished import must not look complete while the rows change
    (out_dir / MANIFEST_NAME).unlink(missing_ok=True)
    tmp = target_file.with_name(f".{target_file.name}.tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=PREDICTION_SCHEMA), tmp, compression="zstd")
    tmp.replace(target_file)
    totals = {"rows": len(rows), "correct": sum(r["correct"] for r in rows),
              "harness_metric_mean": {m: sum(v) / len(v) for m, v in harness_metric.items()}}
    ks = sorted({f["k"] for f in per_file})
    filters = sorted({f["filter"] for f in per_file if f["filter"] is not None})
    config = {"model": model, "revision": revision, "task": task,
              "k": ks[0] if len(ks) == 1 else ks, "seed": seed,
              "question_field": question_field,
              "filter": (filters[0] if len(filters) == 1 else filters) if filters else None,
              "k_given": k, "filter_given": filter_name, "files": per_file,
              "instances": str(instances_dir), "source": "lm-evaluation-harness --log_samples"}
    manifest = build_manifest("import_lm_eval", config,
                              describe_local_inputs(list(files) + results_files, checksum=True),
                              totals, started, upstream={"instances": read_manifest(
                                  instances_dir, stage=INSTANCE_STAGES)["fingerprint"]})
    write_manifest(out_dir, manifest)
    return manifest
