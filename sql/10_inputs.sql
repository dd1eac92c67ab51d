-- freqgap: the inputs of `make gaps` as views over the Parquet of the earlier stages
-- (docs/DATA.md). Nothing is copied: DuckDB reads the files when a query needs them.
--
-- The file paths come from DuckDB variables, so this file runs as is in the duckdb CLI:
--   SET VARIABLE unigrams_files = ['out/counts/unigrams/**/*.parquet']; ... ; .read sql/10_inputs.sql
-- jobs/gaps.py sets them from conf/gaps.yaml; in results/freqgap.duckdb the same views are
-- stored with the paths written in, so the database answers without any setup.

-- unigrams: ω{a}, the number of token positions whose term is a (SPEC §2).
CREATE OR REPLACE VIEW unigrams AS
SELECT term, kind, "count"
FROM read_parquet(getvariable('unigrams_files'));

-- pairs: ω{a,b}, position pairs i < j within the window, key sorted as strings (t1 <= t2).
CREATE OR REPLACE VIEW pairs AS
SELECT t1, t2, "count"
FROM read_parquet(getvariable('pairs_files'));

-- triples: ω{a,b,c}, position triples within the window, t1 <= t2 <= t3.
CREATE OR REPLACE VIEW triples AS
SELECT t1, t2, t3, "count"
FROM read_parquet(getvariable('triples_files'));

-- counts: all three tables as one, keyed by arity (n_terms) and the sorted terms, for
-- ad-hoc look-ups such as  SELECT "count" FROM counts WHERE t1 = '24' AND t2 = 'hour'.
CREATE OR REPLACE VIEW counts AS
SELECT 1 AS n_terms, term AS t1, NULL::VARCHAR AS t2, NULL::VARCHAR AS t3, "count" FROM unigrams
UNION ALL
SELECT 2, t1, t2, NULL::VARCHAR, "count" FROM pairs
UNION ALL
SELECT 3, t1, t2, t3, "count" FROM triples;

-- instances: one row per task instance (operands, answer, question text; SPEC §3).
CREATE OR REPLACE VIEW instances AS
SELECT task, instance_id, x1, x2, x3, y, question, answer
FROM read_parquet(getvariable('instances_files'));

-- instance_terms: the term key of each instance under each frequency definition:
-- n_terms terms sorted as strings in t1..t3 (numbers without leading zeros).
CREATE OR REPLACE VIEW instance_terms AS
SELECT task, instance_id, freq_def, n_terms, t1, t2, t3,
       concat_ws(',', t1, t2, t3) AS key
FROM read_parquet(getvariable('instance_terms_files'));

-- predictions: one row per (model, revision, task, k, seed, instance_id), all models found.
-- A missing revision reads as '' so that it groups and joins like any other value.
-- `filename` names the Parquet file a row came from, for error messages.
CREATE OR REPLACE VIEW predictions AS
SELECT model, coalesce(revision, '') AS revision, task, k, seed, instance_id,
       continuation, answer, answer_lenient, correct, correct_lenient, filename
FROM read_parquet(getvariable('predictions_files'), filename = true, union_by_name = true);
