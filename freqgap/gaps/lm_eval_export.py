"""Export an instances directory as lm-evaluation-harness tasks (YAML + a local JSON Lines
dataset per task), so any lm-eval backend (vLLM, an API) runs freqgap's exact prompts.

One lm-eval task per (task, k, seed) of prompts.parquet, named by `lm_task_name`; its
documents are the prompts rows of that group in instance order, so a document's position
(lm-eval's `doc_id`) is fixed by the instances alone (`doc_ids`, also used by the
`--examples` writer). The prompt already holds the k shots: lm-eval runs it zero-shot,
greedy, stopping at a newline after at most `max_gen_toks` tokens, as `freqgap predict`
does. Each document carries task, k, seed and instance_id, so the import keeps the ids.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from freqgap.contract import INSTANCE_STAGES
from freqgap.errors import FreqgapError
from freqgap.inference.prompts import read_prompts
from freqgap.manifest import read_manifest

TAG = "freqgap"
DATA_DIR = "data"
# The fields of an exported document; the importer recognises an exported log by them.
DOC_FIELDS = ("task", "k", "seed", "instance_id", "question", "prompt", "answer")
DEFAULT_MAX_GEN_TOKS = 5   # freqgap predict's --max-new-tokens default


class _Dumper(yaml.SafeDumper):
    """Strings with a newline (the stop sequence) double-quoted, `"\n"`, not folded."""


_Dumper.add_representer(str, lambda d, s: d.represent_scalar(
    "tag:yaml.org,2002:str", s, style='"' if "\n" in s else None))


class LmEvalExportError(FreqgapError):
    """The instances cannot be exported or the output directory is taken."""


def lm_task_name(task: str, k: int, seed: int) -> str:
    """lm-eval's name of one (task, k, seed) group: freqgap_<task>_k<k>_s<seed>."""
    return f"{TAG}_{task}_k{int(k)}_s{int(seed)}"


def documents(instances_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """lm-eval task name -> its documents in doc_id order (instance order of the group)."""
    read_manifest(instances_dir, stage=INSTANCE_STAGES)
    if not (Path(instances_dir) / "prompts.parquet").is_file():
        raise LmEvalExportError(f"{instances_dir}: no prompts.parquet; only the instances of "
                                "`freqgap instances` can be exported (a suite builds its "
                                "prompts and scores letters by log-probability when it runs)")
    table = read_prompts(instances_dir, ["task", "k", "seed", "instance_id", "prompt", "answer"])
    questions = {(r["task"], r["instance_id"]): r["question"] for r in pq.read_table(
        Path(instances_dir) / "instances.parquet",
        columns=["task", "instance_id", "question"]).to_pylist()}
    rows = sorted(table.to_pylist(), key=lambda r: (r["task"], r["k"], r["seed"],
                                                    r["instance_id"]))
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        doc = {**r, "question": questions.get((r["task"], r["instance_id"]))}
        out.setdefault(lm_task_name(r["task"], r["k"], r["seed"]), []).append(
            {f: doc[f] for f in DOC_FIELDS})
    return out


def doc_ids(docs: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, int, int, int],
                                                            tuple[str, int]]:
    """(task, k, seed, instance_id) -> (lm-eval task, doc_id)."""
    return {(d["task"], d["k"], d["seed"], d["instance_id"]): (name, i)
            for name, group in docs.items() for i, d in enumerate(group)}


def task_config(name: str, data_file: Path, max_gen_toks: int) -> dict[str, Any]:
    """One lm-eval task: the document's prompt as is, its answer as the target."""
    return {"task": name, "tag": [TAG], "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(data_file)}},
            "test_split": "test", "output_type": "generate_until",
            "doc_to_text": "prompt", "doc_to_target": "answer", "num_fewshot": 0,
            "generation_kwargs": {"until": ["\n"], "do_sample": False, "temperature": 0.0,
                                  "max_gen_toks": int(max_gen_toks)},
            # lm-eval's own exact_match scored as the paper rule: the first whitespace-
            # delimited token of the text before the newline (freqgap.inference.parse)
            "filter_list": [{"name": "paper_rule", "filter": [
                {"function": "regex", "regex_pattern": r"^\s*(\S+)", "group_select": 0},
                {"function": "take_first"}]}],
            "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                             "higher_is_better": True}],
            "metadata": {"version": 1.0}}


def jsonl_text(docs: list[dict[str, Any]]) -> str:
    """The dataset file's bytes: one JSON object per line, keys in DOC_FIELDS order."""
    return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)


def export(instances_dir: str | Path, out_dir: str | Path,
           max_gen_toks: int = DEFAULT_MAX_GEN_TOKS) -> dict[str, int]:
    """Write <out>/<task>.yaml and <out>/data/<task>.jsonl for every group; returns the
    documents per task. Written into a sibling temporary directory, renamed when complete,
    so a failed export leaves nothing that looks like one."""
    out = Path(out_dir).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LmEvalExportError(f"{out}: exists and is not empty; remove it or pass another "
                                "--out (an export is written whole)")
    docs = documents(instances_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    (tmp / DATA_DIR).mkdir()
    for name, group in docs.items():
        (tmp / DATA_DIR / f"{name}.jsonl").write_text(jsonl_text(group), encoding="utf-8")
        config = task_config(name, out / DATA_DIR / f"{name}.jsonl", max_gen_toks)
        (tmp / f"{name}.yaml").write_text(yaml.dump(config, Dumper=_Dumper, sort_keys=False),
                                          encoding="utf-8")
    try:
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise LmEvalExportError(f"{out}: written meanwhile by another run; remove it or "
                                "pass another --out") from None
    return {name: len(group) for name, group in docs.items()}
