"""Import lm-evaluation-harness `--log_samples` logs as predictions (docs/DATA.md).

lm-eval writes one `samples_<task>_<date>.jsonl` per task, a JSON object per document with
`doc_id`, `doc`, `target`, `arguments` (the prompt), `resps` (the raw generations),
`filtered_resps`, `filter` and the metrics. For a task in this project's format the
generation is scored here by the paper rule (freqgap.inference.parse), against the answer of
the instance whose question text matches, so the gaps of imported and native predictions
mean the same thing. The harness's own metric is kept only in the manifest's totals.

Logs of tasks written by `freqgap export-lm-eval` (freqgap.gaps.lm_eval_export) are read
by their documents' ids instead: each document names its task, k, seed and instance_id, and
the prompt lm-eval sent must be that instance's prompt, byte for byte.
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
from freqgap.gaps.lm_eval_export import DOC_FIELDS
from freqgap.inference.prompts import read_prompts
from freqgap.inference.parse import score
from freqgap.inference.writer import PREDICTION_SCHEMA
from freqgap.contract import INSTANCE_STAGES
from freqgap.jsonl import iter_json_objects
from freqgap.manifest import (MANIFEST_NAME, build_manifest, dataset_records,
                              describe_local_inputs, now_iso, read_manifest, write_manifest)

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


def load_prompts(instances_dir: Path) -> dict[tuple[str, int, int, int], tuple[str, str]]:
    """(task, k, seed, instance_id) -> (prompt, answer) from instances/prompts.parquet."""
    table = read_prompts(instances_dir, ["task", "k", "seed", "instance_id", "prompt", "answer"])
    return {(r["task"], r["k"], r["seed"], r["instance_id"]): (r["prompt"], r["answer"])
            for r in table.to_pylist()}


def exported_doc(sample: dict[str, Any]) -> dict[str, Any] | None:
    """The document of a task written by `freqgap export-lm-eval`, else None."""
    doc = sample.get("doc")
    return doc if isinstance(doc, dict) and all(f in doc for f in DOC_FIELDS) else None


def _exported_key(sample: dict[str, Any], doc: dict[str, Any], where: str,
                  prompts: dict[tuple[str, int, int, int], tuple[str, str]], task: str | None,
                  k: int | None, seed: int) -> tuple[str, int, int, int, str]:
    """(task, k, seed, instance_id, answer) of an exported document, checked: the instance
    exists with that prompt and answer, lm-eval sent that prompt, and --task/--k/--seed
    (when given) agree with the document."""
    try:
        key = (str(doc["task"]), int(doc["k"]), int(doc["seed"]), int(doc["instance_id"]))
    except (TypeError, ValueError):
        got = [doc[f] for f in DOC_FIELDS[:4]]
        raise LmEvalImportError(f"{where}: doc task/k/seed/instance_id {got!r} are not a "
                                "task name and three integers") from None
    for flag, given, have in (("--task", task, key[0]), ("--k", k, key[1]),
                              ("--seed", seed or None, key[2])):
        if given is not None and given != have:
            raise LmEvalImportError(f"{where}: {flag} {given} but the exported document is "
                                    f"{have}; drop {flag} (exported logs carry their own)")
    if key not in prompts:
        raise LmEvalImportError(f"{where}: task {key[0]}, k={key[1]}, seed={key[2]}, instance "
                                f"{key[3]} is not in these instances' prompts; import with the "
                                "instances directory that was exported")
    prompt, answer = prompts[key]
    if doc["prompt"] != prompt or prompt_text(sample) != prompt:
        raise LmEvalImportError(f"{where}: the prompt lm-eval sent is not the instance's prompt "
                                f"(task {key[0]}, k={key[1]}, seed={key[2]}, instance {key[3]}); "
                                "run the exported task as written (no --num_fewshot, "
                                "--system_instruction or chat template)")
    return (*key, answer)


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


def _check_target(sample: dict[str, Any], answer: str, where: str, task: str, iid: int) -> None:
    target = sample.get("target")
    if target is not None and str(target).strip() != answer:
        raise LmEvalImportError(f"{where}: target {target!r} differs from the instance's "
                                f"answer {answer!r} (task {task}, instance {iid})")


def _row(model: str, revision: str, task: str, shots: int, seed: int, iid: int, text: str,
         answer: str, sample: dict[str, Any], where: str,
         seen: dict[tuple[str, int, int, int], str],
         harness_metric: dict[str, list[float]]) -> dict[str, Any]:
    """One prediction row, scored by the paper rule; a repeated instance is an error."""
    key = (task, shots, seed, iid)
    if key in seen:
        raise LmEvalImportError(f"{where}: a second sample for task {task}, k={shots}, "
                                f"seed={seed}, instance {iid} (first at {seen[key]})")
    seen[key] = where
    for metric in ("exact_match", "acc"):
        if isinstance(sample.get(metric), (int, float)):
            harness_metric.setdefault(metric, []).append(float(sample[metric]))
    return {"model": model, "revision": revision, "task": task, "k": shots, "seed": seed,
            "instance_id": iid, "continuation": text, **score(text, answer)}


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
    prompts: dict[tuple[str, int, int, int], tuple[str, str]] | None = None
    for path in files:
        m = _SAMPLES_NAME.match(path.name)
        lm_task = m.group(1) if m else path.stem
        samples = list(read_samples(path))
        exported = bool(samples) and exported_doc(samples[0][1]) is not None
        if exported:
            results, shots_from = results_file_of(path), "doc"
            prompts = load_prompts(instances_dir) if prompts is None else prompts
        else:
            shots, shots_from, results = _shots(path, lm_task, k)
        if results and results not in results_files:
            results_files.append(results)
        chosen_filter = filter_name
        file_ks: set[int] = set()
        for lineno, sample in samples:
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
            doc = exported_doc(sample)
            if (doc is not None) != exported:
                raise LmEvalImportError(f"{where}: mixes documents of an exported task with "
                                        "others in one samples file")
            if doc is not None:
                inst_task, shots, row_seed, iid, answer = _exported_key(
                    sample, doc, where, prompts, task, k, seed)
                file_ks.add(shots)
                _check_target(sample, answer, where, inst_task, iid)
                rows.append(_row(model, revision, inst_task, shots, row_seed, iid, text, answer,
                                 sample, where, seen, harness_metric))
                continue
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
            _check_target(sample, answer, where, inst_task, iid)
            file_ks.add(int(shots))
            rows.append(_row(model, revision, inst_task, int(shots), int(seed), iid, text, answer,
                             sample, where, seen, harness_metric))
        per_file.append({"file": str(path), "lm_task": lm_task,
                         "k": (file_ks.pop() if len(file_ks) == 1 else sorted(file_ks))
                         if exported else int(shots),
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
    ks = sorted({r["k"] for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    filters = sorted({f["filter"] for f in per_file if f["filter"] is not None})
    config = {"model": model, "revision": revision, "task": task,
              "k": ks[0] if len(ks) == 1 else ks, "seed": seeds[0] if len(seeds) == 1 else seeds,
              "question_field": question_field,
              "filter": (filters[0] if len(filters) == 1 else filters) if filters else None,
              "k_given": k, "filter_given": filter_name, "files": per_file,
              "instances": str(instances_dir), "source": "lm-evaluation-harness --log_samples"}
    manifest = build_manifest("import_lm_eval", config,
                              describe_local_inputs(list(files) + results_files, checksum=True),
                              totals, started, upstream={"instances": read_manifest(
                                  instances_dir, stage=INSTANCE_STAGES)["fingerprint"]},
                              files=dataset_records(out_dir))   # checked by every reader
    write_manifest(out_dir, manifest)
    return manifest
