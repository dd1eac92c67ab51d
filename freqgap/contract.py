"""The data contract: every dataset and manifest that crosses a stage, declared once.

Producers cast their tables through `cast_table` before writing and their manifests go
through `freqgap.manifest.write_manifest`, which checks the stage's required fields here;
consumers check files with `check_parquet` and manifests with `read_manifest(dir,
stage=...)`. `docs/DATA.md` is generated from these declarations
(`python -m freqgap.contract --markdown`), and a test keeps the two equal.

Import-light on purpose (the CLI imports it while building its parsers): pyarrow is
imported inside the functions that need it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from freqgap.errors import FreqgapError, InputMismatchError


class SchemaError(FreqgapError):
    """A Parquet file's columns or types differ from the contract; the message names them."""


class ManifestError(FreqgapError):
    """A `_manifest.json` is missing, unfinished, incomplete or edited; the message says so."""


class ContractViolation(RuntimeError):
    """A producer tried to write something the contract does not allow: a bug, not a user error."""


# Arrow type of each contract type name (resolved lazily: pyarrow is heavy).
TYPE_NAMES = ("string", "int64", "float64", "bool", "list<int64>")


def arrow_type(name: str):
    """The pyarrow type of a contract type name."""
    import pyarrow as pa

    return {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(),
            "bool": pa.bool_(), "list<int64>": pa.list_(pa.int64())}[name]


def _type_name(arrow) -> str:
    """The contract name of a pyarrow type, or its own spelling when it has none."""
    import pyarrow as pa

    for name in TYPE_NAMES:
        if arrow == arrow_type(name):
            return name
    if pa.types.is_large_string(arrow):
        return "large_string"
    return str(arrow)


@dataclasses.dataclass(frozen=True)
class Column:
    name: str
    type: str
    doc: str = ""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One table that crosses a stage: where it lies in the producer's directory, its
    columns (in order), the columns that identify a row, and who writes it."""

    name: str
    stages: tuple[str, ...]            # the stages that write it
    path: str                          # inside the stage's output directory
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    doc: str
    optional: tuple[Column, ...] = ()  # columns a producer may add (e.g. step_bucket)
    optional_before: str | None = None  # where they go (None: at the end)
    open: bool = False                 # further columns allowed (results tables)
    required: bool = False             # no column holds nulls (Parquet REQUIRED columns)

    def column(self, name: str) -> Column:
        for c in self.columns + self.optional:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def ordered(self, optional: Iterable[str] = ()) -> tuple[Column, ...]:
        """The columns with the named optional ones in their place."""
        extra = tuple(self.column(n) for n in optional)
        names = self.column_names
        at = names.index(self.optional_before) if self.optional_before in names else len(names)
        return self.columns[:at] + extra + self.columns[at:]

    def schema(self, optional: Iterable[str] = ()):
        """The Arrow schema, with the named optional columns in their place."""
        import pyarrow as pa

        return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=not self.required)
                          for c in self.ordered(optional)])

    def spark_ddl(self, optional: Iterable[str] = ()) -> str:
        """The schema as a Spark DDL string (for mapInArrow), same order."""
        spark = {"string": "string", "int64": "bigint", "float64": "double",
                 "bool": "boolean", "list<int64>": "array<bigint>"}
        return ", ".join(f"{c.name} {spark[c.type]}" for c in self.ordered(optional))


@dataclasses.dataclass(frozen=True)
class Stage:
    """A stage's output directory: the datasets in it and the manifest fields it must carry
    (dotted paths below the manifest's top level, beyond the fields every stage has)."""

    name: str
    doc: str
    output: str
    datasets: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


def _c(spec: str) -> tuple[Column, ...]:
    """Columns from 'name:type name:type …' (type defaults to string)."""
    out = []
    for item in spec.split():
        name, _, typ = item.partition(":")
        out.append(Column(name, typ or "string"))
    return tuple(out)


_STEP_BUCKET = Column("step_bucket", "int64",
                      "training-order counts only: the checkpoint step whose data holds the "
                      "occurrences (ω at step s = Σ count over step_bucket ≤ s)")
_DOCUMENTS = Column("documents", "int64",
                    "counts by a unit other than the window (`--unit sentence|document|sequence`, "
                    "the unit in the manifest's `config.unit`) and `--doc-freq` only: the number "
                    "of units (sentences, documents or training sequences) holding the term; "
                    "`count` stays its occurrences")
_SUBSET = Column("subset", "string",
                 "`--by-subset` counts only: the record's subset (`meta.pile_set_name`, or "
                 "`--subset-field`; `''` for a record without it, and for Parquet rows); the "
                 "sum over subsets is the plain count")
_NOT_KEY = ("documents",)     # optional columns that are values, not part of the key
_PREDICTION_COLUMNS = _c("model revision task k:int64 seed:int64 instance_id:int64 "
                         "continuation answer answer_lenient correct:bool correct_lenient:bool")
_INSTANCE_COLUMNS = _c("task instance_id:int64 x1:int64 x2 x3:int64 y:int64 question answer")
_TERM_COLUMNS = _c("task instance_id:int64 freq_def n_terms:int64 t1 t2 t3")

DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("unigrams", ("count_terms",), "unigrams/", _c("term kind count:int64"), ("term",),
            "one row per term: `kind` is `number` or `word`; terms are numbers as written "
            "(1–6 ASCII digits) or the lower-case singular of a vocabulary word; absent "
            "terms have count 0", optional=(_SUBSET, _STEP_BUCKET, _DOCUMENTS), optional_before="count",
            required=True),
    Dataset("pairs", ("count_terms",), "pairs/", _c("t1 t2 count:int64"), ("t1", "t2"),
            "co-occurrences within the window (other units: the units holding both, t1 ≠ t2), "
            "t1 ≤ t2 as strings", optional=(_SUBSET, _STEP_BUCKET),
            optional_before="count", required=True),
    Dataset("triples", ("count_terms",), "triples/", _c("t1 t2 t3 count:int64"),
            ("t1", "t2", "t3"), "co-occurrences within the window (other units: the units "
            "holding all three, distinct; with `--pairs`, the listed triples), t1 ≤ t2 ≤ t3",
            optional=(_SUBSET, _STEP_BUCKET), optional_before="count", required=True),
    Dataset("hits", ("count_terms",), "hits/",
            _c("n_terms:int64 t1 t2 t3 file line:int64 occurrences:int64 total_units:int64 "
               "total_occurrences:int64"), ("t1", "t2", "t3", "file", "line"),
            "only with `count --hits KEYS_FILE`: per listed key (its n_terms terms sorted as "
            "strings in t1..t3, unused slots null) the units holding it (documents; sentences "
            "under the sentence unit), at most `--hits-limit` of them, those of the smallest "
            "(file, line[, sentence]) (`file` as the manifest's inputs name it, `line` the "
            "1-based JSON Lines line or Parquet row), with `occurrences`, the key's count in "
            "that unit (a term's positions; window unit: a pair's or triple's position pairs "
            "or triples within the window; other units: 1 for a pair or triple); "
            "`total_units` and `total_occurrences` are over every unit holding it, so "
            "total_occurrences equals the key's count in the counts tables (and, under a unit "
            "other than the window, a pair's or triple's total_units too, and a term's "
            "`documents`); a key held by no unit has no row",
            optional=(Column("sentence", "int64", "sentence-unit hit lists only: the "
                             "sentence's number within its document, from 1"),
                      Column("sequence", "int64", "indexed training-order hit lists only: the "
                             "listed unit is a training sequence, its entry index from 0 "
                             "(`file` the dataset PREFIX, `line` null; the smallest entries "
                             "are listed, totals over all step buckets)"),
                      Column("step", "int64", "indexed training-order hit lists only: the "
                             "sequence's step, entry // seqs_per_step")),
            optional_before="occurrences"),
    Dataset("instances", ("instances", "suite_instances"), "instances.parquet",
            _INSTANCE_COLUMNS, ("task", "instance_id"),
            "one row per task instance; `x2` is the second operand as printed or the source "
            "unit, `x3` the time unit's multiplier (else null), `answer` = str(y); the suites "
            "leave x1, x2, x3, y null"),
    Dataset("instance_terms", ("instances", "suite_instances"), "instance_terms.parquet",
            _TERM_COLUMNS, ("task", "instance_id", "freq_def"),
            "the term key of an instance under a frequency definition (`1`, `1,2`, `1,y`, "
            "`1,2,3`, `1,2,y`, or a suite's): the n_terms terms sorted as strings in t1..t3, "
            "unused slots null, numbers without leading zeros"),
    Dataset("prompts", ("instances",), "prompts.parquet",
            _c("task k:int64 seed:int64 instance_id:int64 shot_ids:list<int64> prefix prompt "
               "answer"), ("task", "k", "seed", "instance_id"),
            "one row per (task, k, seed, test instance): `prefix` holds the k shots, "
            "`prompt` = prefix + `Q: {question}\\nA:`"),
    Dataset("predictions", ("predictions", "import_lm_eval"), "part-*.parquet",
            _PREDICTION_COLUMNS, ("model", "revision", "task", "k", "seed", "instance_id"),
            "one row per prediction: `answer` is the first whitespace-delimited token of the "
            "continuation, `correct` the paper's rule, the lenient columns SPEC §4's rule"),
    Dataset("suite_predictions", ("suite_predictions",), "predictions.parquet",
            _PREDICTION_COLUMNS, ("model", "revision", "task", "k", "seed", "instance_id"),
            "the predictions shape, written by the suites (the lenient columns repeat the "
            "strict ones)"),
    Dataset("per_key", ("gaps",), "per_key.parquet",
            _c("model revision task k:int64 freq_def n_terms:int64 t1 t2 t3 omega:int64 "
               "accuracy:float64 n_rows:int64"),
            ("model", "revision", "task", "k", "freq_def", "t1", "t2", "t3"),
            "one row per (model, revision, task, k, definition, key), seeds pooled: ω and "
            "the key's mean accuracy; further columns are the gaps stage's (docs/gaps.md)",
            open=True),
    Dataset("gaps", ("gaps",), "gaps.parquet",
            _c("model revision task k:int64 freq_def accuracy:float64 delta:float64 "
               "ci_low:float64 ci_high:float64"),
            ("model", "revision", "task", "k", "freq_def"),
            "one row per (model, revision, task, k, definition): Δ with its bootstrap "
            "interval; further columns are the gaps stage's (docs/gaps.md)", open=True),
    Dataset("rule_set_shift", ("gaps",), "rule_set_shift.parquet",
            _c("model revision task k:int64 freq_def delta:float64 delta_compare:float64 "
               "delta_shift:float64"),
            ("model", "revision", "task", "k", "freq_def"),
            "only with `gaps --compare-counts DIR`: per group, Δ over --counts, Δ over the "
            "other counts (same predictions, instances and settings; no interval) and "
            "delta_shift = delta_compare − delta (null where either is withheld); further "
            "columns: each side's seen keys, ρ and withheld reason (docs/gaps.md)", open=True),
)}

# Fields every manifest has (freqgap.manifest.build_manifest writes them).
BASE_FIELDS = ("stage", "status", "config", "inputs", "totals", "versions", "started",
               "finished", "fingerprint")
# totals keys left out of the fingerprint: they measure time, not the result.
TIMING_TOTALS = ("seconds",)
TIMING_SUFFIX = "_s"
COUNT_SETTINGS_FIELDS = ("window", "number_rule", "max_digits", "vocab")

STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("generate_corpus", "a synthetic Pile-format corpus (`.jsonl.zst` shards)",
          "data/sample", required=("shards", "operand_ranks")),
    Stage("generate_facts_corpus", "the invented-facts corpus of `make demo-entities` "
          "(one JSON Lines shard; every fact with its planted documents; docs/demo_entities.md)",
          "out/demo-entities/corpus", required=("shards", "facts")),
    Stage("count_terms", "term counts", "out/counts", ("unigrams", "pairs", "triples"),
          ("config.window", "config.max_order", "config.number_rule", "config.max_digits",
           "config.vocab", "config.text_field", "plan_fingerprint", "outputs")),
    Stage("instances", "task instances and prompts", "out/instances",
          ("instances", "instance_terms", "prompts"),
          ("upstream.counts", "upstream.counts_dir", "counts_settings")),
    Stage("suite_instances", "a suite's instances", "out/suites/<suite>/instances",
          ("instances", "instance_terms"),
          ("upstream.counts", "counts_settings", "tasks", "freq_defs")),
    Stage("predictions", "a model's predictions", "out/predictions/<model>",
          ("predictions",), ("upstream.instances",)),
    Stage("import_lm_eval", "predictions imported from lm-evaluation-harness",
          "out/predictions/<model>", ("predictions",), ("upstream.instances",)),
    Stage("suite_predictions", "a model's predictions on a suite",
          "out/suites/<suite>/predictions/<model>", ("suite_predictions",),
          ("upstream.instances",)),
    Stage("suite_summary", "a suite's metrics and trends over models",
          "out/suites/<suite>/summary"),
    Stage("suite_qa_bins", "the QA suite's accuracy per log bin of the relevant-document "
          "count, and its figure (docs/suites.md)", "out/suites/qa/qa", (), ("upstream.gaps",)),
    Stage("gaps", "performance gaps", "results", ("per_key", "gaps"),
          ("upstream.counts", "upstream.instances", "upstream.predictions",
           "counts_mismatch_ok")),
    Stage("dynamics_gaps", "performance gaps per training checkpoint: `gaps_by_step.parquet` "
          "and `per_key_by_step.parquet` are the gaps and per_key tables with `step` first "
          "(docs/dynamics.md)", "out/dynamics/results",
          required=("upstream.counts", "upstream.instances", "upstream.predictions")),
    Stage("train_lm", "a trained demo model", "models/demo"),
    Stage("simulate", "the Zipf-versus-uniform experiment", "out/simulate"),
    Stage("dynamics_gaps", "performance gaps per checkpoint (ω as of each step)",
          "results/dynamics", (), ("upstream.counts", "upstream.instances",
                                   "upstream.predictions")),
)}

# What a consumer accepts as each kind of input.
PREDICTION_STAGES = ("predictions", "import_lm_eval", "suite_predictions")
INSTANCE_STAGES = ("instances", "suite_instances")


# ---- tables -------------------------------------------------------------------------
def _dataset(dataset: str | Dataset) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else DATASETS[dataset]


def schema_problems(dataset: str | Dataset, schema) -> list[str]:
    """What is wrong with an Arrow schema for `dataset` (empty when nothing is)."""
    ds = _dataset(dataset)
    found = {f.name: f.type for f in schema}
    problems = []
    for col in ds.columns:
        if col.name not in found:
            problems.append(f"missing column {col.name!r} ({col.type})")
    for name, typ in found.items():
        try:
            col = ds.column(name)
        except KeyError:
            if not ds.open:
                problems.append(f"unexpected column {name!r} ({_type_name(typ)})")
            continue
        if typ != arrow_type(col.type):
            problems.append(f"column {name!r} is {_type_name(typ)}, expected {col.type}")
    return problems


def validate_table(dataset: str | Dataset, table, where: str) -> None:
    """SchemaError naming `where`, the column, the expected and the found type."""
    problems = schema_problems(dataset, table.schema)
    if problems:
        raise SchemaError(f"{where}: {'; '.join(problems)} (docs/DATA.md, "
                          f"{_dataset(dataset).name})")


def cast_table(dataset: str | Dataset, table, where: str = "output"):
    """The table in the contract's column order and types, for a producer to write.

    Widening casts (int32 → int64) are done; a missing column, an unexpected one or a cast
    that would lose values is a bug in the producer: ContractViolation.
    """
    import pyarrow as pa

    ds = _dataset(dataset)
    names = set(table.column_names)
    missing = [c.name for c in ds.columns if c.name not in names]
    extra = [n for n in table.column_names if n not in {c.name for c in ds.columns + ds.optional}]
    if missing or (extra and not ds.open):
        raise ContractViolation(f"{where}: {ds.name} table lacks {missing} / has unexpected "
                                f"{extra} (freqgap/contract.py)")
    optional = [c.name for c in ds.optional if c.name in names]
    target = ds.schema(optional)
    if ds.open:
        target = pa.schema(list(target) + [table.schema.field(n) for n in extra])
    try:
        return table.select(target.names).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ContractViolation(f"{where}: {ds.name} table does not cast to the contract "
                                f"schema: {exc}") from exc


def from_rows(dataset: str | Dataset, rows: Sequence[dict[str, Any]], optional: Iterable[str] = ()):
    """An Arrow table of `dataset` from row dicts (missing keys are null)."""
    import pyarrow as pa

    return pa.Table.from_pylist(list(rows), schema=_dataset(dataset).schema(optional))


def parquet_files(path: str | Path) -> list[Path]:
    """The Parquet files of a dataset path: the file itself or every *.parquet below a
    directory (hidden and `_`-prefixed names, as Spark writes them, left out)."""
    path = Path(path)
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.parquet")
                  if p.is_file() and not any(part.startswith((".", "_"))
                                             for part in p.relative_to(path).parts))


def check_parquet(dataset: str | Dataset, path: str | Path,
                  error: type[Exception] = SchemaError) -> list[Path]:
    """Check every Parquet file of `path` against `dataset` (schemas only, no data read);
    returns the files. The error (SchemaError for inputs; a producer checking what it wrote
    passes ContractViolation) names the file, column, expected and found type."""
    import pyarrow.parquet as pq

    files = parquet_files(path)
    if not files:
        raise error(f"{path}: no Parquet files of {_dataset(dataset).name} "
                    "(run the stage that writes it)")
    for f in files:
        try:
            schema = pq.read_schema(f)
        except Exception as exc:   # pyarrow raises several types for a damaged file
            raise error(f"{f}: not a readable Parquet file ({exc})") from exc
        problems = schema_problems(dataset, schema)
        if problems:
            raise error(f"{f}: {'; '.join(problems)} (docs/DATA.md, {_dataset(dataset).name})")
    return files


def check_written(dataset: str | Dataset, path: str | Path) -> list[Path]:
    """check_parquet for a producer's own output: a mismatch is a bug (ContractViolation)."""
    return check_parquet(dataset, path, error=ContractViolation)


# ---- manifests ----------------------------------------------------------------------
def _normalised(value: Any) -> Any:
    """The value as JSON gives it back (tuples → lists, paths → strings)."""
    return json.loads(json.dumps(value, default=str))


def fingerprint_payload(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the fingerprint covers: stage, config, inputs, upstream and the totals without
    timing keys (`seconds`, names ending in `_s`) — so an identical rerun keeps it."""
    totals = manifest.get("totals") or {}
    if isinstance(totals, dict):
        totals = {k: v for k, v in totals.items()
                  if k not in TIMING_TOTALS and not str(k).endswith(TIMING_SUFFIX)}
    return _normalised({"stage": manifest.get("stage"), "config": manifest.get("config"),
                        "inputs": manifest.get("inputs"), "totals": totals,
                        "upstream": manifest.get("upstream")})


def fingerprint(manifest: dict[str, Any]) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of the payload."""
    text = json.dumps(fingerprint_payload(manifest), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_ABSENT = object()


def _lookup(manifest: dict[str, Any], dotted: str) -> Any:
    value: Any = manifest
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def missing_fields(manifest: dict[str, Any]) -> list[str]:
    """Required fields (base and the stage's) that the manifest lacks."""
    stage = STAGES.get(manifest.get("stage"))
    wanted = BASE_FIELDS + (stage.required if stage else ())
    return [f for f in wanted if _lookup(manifest, f) is _ABSENT]


def seal(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with its fingerprint, checked for the stage's required fields (a
    producer that leaves one out has a bug: ContractViolation)."""
    sealed = _normalised({k: v for k, v in manifest.items() if k != "fingerprint"})
    sealed["fingerprint"] = fingerprint(sealed)
    missing = missing_fields(sealed)
    if missing:
        raise ContractViolation(f"stage {sealed.get('stage')!r}: manifest lacks {missing} "
                                "(freqgap/contract.py STAGES)")
    return sealed


def _expected(stage: str | Sequence[str]) -> tuple[str, ...]:
    return (stage,) if isinstance(stage, str) else tuple(stage)


def check_manifest(manifest: dict[str, Any], path: str | Path,
                   stage: str | Sequence[str] | None = None,
                   upstream: dict[str, str | None] | None = None) -> dict[str, Any]:
    """Check a manifest read from `path`: complete, of the expected stage, with the required
    fields, an untouched fingerprint and (when given) the expected upstream fingerprints."""
    if manifest.get("status") != "complete":
        raise ManifestError(f"{path}: status is {manifest.get('status')!r}, not 'complete'; "
                            "rerun the stage that writes it")
    found = manifest.get("stage")
    if stage is not None and found not in _expected(stage):
        want = " or ".join(f"{s!r} ({STAGES[s].doc})" if s in STAGES else repr(s)
                           for s in _expected(stage))
        what = STAGES[found].doc if found in STAGES else "an unknown stage"
        raise InputMismatchError(f"{path}: written by stage {found!r} ({what}), but {want} "
                                 "is expected here; pass the directory that stage wrote")
    missing = missing_fields(manifest)
    if missing:
        raise ManifestError(f"{path}: lacks field(s) {', '.join(missing)} (written by an "
                            "older freqgap or by hand); rerun the stage that writes it")
    if manifest["fingerprint"] != fingerprint(manifest):
        raise ManifestError(f"{path}: fingerprint does not match the manifest's content "
                            "(edited after it was written?); rerun the stage that writes it")
    for name, expected in (upstream or {}).items():
        recorded = (manifest.get("upstream") or {}).get(name)
        if recorded != expected:
            raise InputMismatchError(
                f"{path}: made from {name} with fingerprint {str(recorded)[:12]}, not from the "
                f"given {name} ({str(expected)[:12]}); rerun this stage on those {name}")
    return manifest


def refuse_partial_counts(manifest: dict[str, Any], directory: str | Path) -> None:
    """Refuse counts that are not one ω per term of the whole corpus: a dry run (`count
    --limit`) or counts by subset. Why: both look like a result (a manifest, the tables)
    and a reader of ω would take them for the corpus's counts."""
    config = manifest.get("config") or {}
    if config.get("limit"):
        raise InputMismatchError(
            f"{directory}: a dry run (count --limit {config['limit']}: the first records only), "
            "not the corpus's counts; count without --limit")
    if config.get("by_subset"):
        raise InputMismatchError(
            f"{directory}: counts by subset (count --by-subset: a row per term and subset); "
            "count without --by-subset (the sum over subsets is the plain count)")


def count_settings(counts_config: dict[str, Any]) -> dict[str, Any]:
    """The counts settings that change what a term or a co-occurrence is (SPEC §2)."""
    return {k: counts_config.get(k) for k in COUNT_SETTINGS_FIELDS}


# ---- docs/DATA.md -------------------------------------------------------------------
def markdown() -> str:
    """docs/DATA.md, generated from the declarations above."""
    lines = [
        "# Data contract between stages",
        "",
        "Generated from `freqgap/contract.py` by `python -m freqgap.contract --markdown` "
        "(a test checks that this file equals the output). Where this file and SPEC differ "
        "in detail, this file is what the code enforces.",
        "",
        "Every stage reads only the files the stage before it wrote. Every output "
        "directory carries `_manifest.json`, written last (a directory without a complete "
        "one is not a result), with the fields",
        f"{', '.join(f'`{f}`' for f in BASE_FIELDS)} and the stage's own (below).",
        "",
        "**Fingerprint.** `fingerprint` = sha256 of the canonical JSON (keys sorted, "
        "separators `,` `:`, UTF-8, after a JSON round trip) of "
        "`{stage, config, inputs, totals, upstream}`, where `totals` leaves out timing keys "
        "(`seconds` and every key ending in `_s`). `versions`, `started`, `finished` and "
        "other fields are not in it: an identical rerun keeps the fingerprint, other inputs "
        "or settings change it. Readers (`freqgap.manifest.read_manifest(dir, stage=..., "
        "upstream=...)`) check `status: complete`, the stage, the required fields, that the "
        "fingerprint matches the content, and the upstream fingerprints they are given.",
        "",
        "**Files.** Every local writer (counts, instances, predictions, import_lm_eval, gaps, "
        "dynamics gaps, suite instances and suite predictions) records `files`: each Parquet file a reader reads (hidden and `_`-prefixed paths "
        "excluded), by path relative to the directory, with `bytes`, `sha256` and `rows`. "
        "`read_manifest` checks them: a file missing, of another size or sha256, or a Parquet "
        "file it does not list is refused naming the file (a lost chunk, a hand-edited "
        "column). Manifests without `files` (written before it was recorded, or of an "
        "`s3a://`/`hdfs://` output) are read without this check.",
        "",
        "**Upstream.** `upstream` names the exact outputs a stage was made from by their "
        "fingerprints: instances record `upstream.counts` (and `counts_dir`), predictions "
        "`upstream.instances`, gaps all three. `gaps` refuses counts whose fingerprint is "
        "not the one the instances recorded (`--counts-mismatch-ok` overrides, recorded as "
        "`counts_mismatch_ok: true` with both fingerprints), and predictions made from "
        "other instances. The suites' instances are not made from counts "
        "(`upstream.counts: null`): then the counts' settings are compared with "
        "`counts_settings` (window, number rule, digits; vocabulary ⊆ the counts').",
        "",
        "**Partial counts.** A dry run (`count --limit N`: `config.limit`) and counts by "
        "subset (`count --by-subset`: `config.by_subset`, tables keyed by `subset` too) are "
        "results of `count_terms`, but `instances` and `gaps` refuse them with one line "
        "(`freqgap.contract.refuse_partial_counts`): neither is one ω per term of the corpus.",
        "",
        "**Types.** Integers are int64 everywhere (`k`, `seed`, `n_terms`, ids, counts); "
        "producers cast through `freqgap.contract.cast_table`, which widens and refuses "
        "anything else.",
        "",
        "## Stages and their manifests",
        "",
        "| stage | output | datasets | required manifest fields (beyond the common ones) |",
        "|---|---|---|---|",
    ]
    for s in STAGES.values():
        ds = ", ".join(f"`{DATASETS[d].path}`" for d in s.datasets) or "—"
        req = ", ".join(f"`{r}`" for r in s.required) or "—"
        lines.append(f"| `{s.name}` ({s.doc}) | `{s.output}/` | {ds} | {req} |")
    lines += ["", "## Datasets", ""]
    for d in DATASETS.values():
        lines += [f"### `{d.name}` — `{d.path}`", "",
                  f"Written by {', '.join(f'`{s}`' for s in d.stages)}; key "
                  f"({', '.join(d.key)}). {d.doc[0].upper()}{d.doc[1:]}."
                  + (" Further columns are allowed." if d.open else "")
                  + (" No column holds nulls (written as Parquet REQUIRED columns)." if d.required else ""), "",
                  "| column | type |", "|---|---|"]
        lines += [f"| `{c.name}` | {c.type} |" for c in d.columns]
        place = f", written before `{d.optional_before}`" if d.optional_before else ""
        lines += [f"| `{c.name}` (optional{place}"
                  f"{'' if c.name in _NOT_KEY else '; then part of the key'}) | {c.type}: {c.doc} |"
                  for c in d.optional]
        lines.append("")
    lines += [
        "## The committed sample corpus",
        "",
        "`data/sample/_manifest.json` (stage `generate_corpus`) lists every shard with its "
        "sha256. Counting such a directory, or files of it, first checks them against it "
        "(`freqgap/counting/corpus_check.py`: a changed, missing or unlisted shard is an "
        "error saying to run `make sample-corpus`; other generated corpora: to regenerate "
        "them). Hashing the 2 MB sample takes about 20 ms.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["--markdown"]:
        print("usage: python -m freqgap.contract --markdown  (prints docs/DATA.md)",
              file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
