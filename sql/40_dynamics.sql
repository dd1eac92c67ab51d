-- freqgap: Δ per checkpoint (issue 13, docs/dynamics.md), once per run. Needs the views of
-- 10_inputs.sql .. 20_selection.sql over counts by training position: count tables with a
-- step_bucket column, where a checkpoint stepN has seen the steps 0..N-1 and bucket c holds
-- the steps c' <= t < c between the previous edge c' and c. So ω as of checkpoint s is the
-- sum of the counts of every bucket <= s (one table, not one per checkpoint).
-- Variables: the *_files globs of 10_inputs.sql, and bucket_edges_csv (the counts' edges
-- as text, '0,1,2,4,...').

-- bucketed_unigrams / _pairs / _triples: the count tables with their step bucket.
CREATE OR REPLACE VIEW bucketed_unigrams AS
SELECT term, step_bucket, "count" FROM read_parquet(getvariable('unigrams_files'));

CREATE OR REPLACE VIEW bucketed_pairs AS
SELECT t1, t2, step_bucket, "count" FROM read_parquet(getvariable('pairs_files'));

CREATE OR REPLACE VIEW bucketed_triples AS
SELECT t1, t2, t3, step_bucket, "count" FROM read_parquet(getvariable('triples_files'));

-- dynamics_predictions: the selected predictions of every checkpoint (small: a copy).
CREATE OR REPLACE TABLE dynamics_predictions AS
SELECT * FROM selected_predictions;

-- checkpoint_steps: each revision and the step it names (stepN -> N; NULL if it names none).
CREATE OR REPLACE TABLE checkpoint_steps AS
SELECT revision,
       TRY_CAST(regexp_extract(revision, '^step([0-9]+)$', 1) AS BIGINT) AS step,
       list_contains(string_split(getvariable('bucket_edges_csv'), ','),
                     regexp_extract(revision, '^step([0-9]+)$', 1)) AS is_edge,
       count(*) AS n_rows,
       list(DISTINCT filename ORDER BY filename) AS files
FROM dynamics_predictions
GROUP BY revision;

-- check_checkpoint_steps: revisions that are not stepN with N a bucket edge of the counts:
-- ω as of such a step cannot be read off the buckets.
CREATE OR REPLACE VIEW check_checkpoint_steps AS
SELECT revision, step, n_rows, files
FROM checkpoint_steps
WHERE step IS NULL OR NOT is_edge;

-- key_bucket_counts: the bucketed counts of the keys the instances use — the only scan of
-- the count tables (a hash join of a few thousand keys), n_rows > 1 = a key counted twice
-- in one bucket (a broken counts output).
CREATE OR REPLACE TABLE key_bucket_counts AS
WITH needed AS (
    SELECT DISTINCT n_terms, t1, t2, t3, key FROM selected_terms
),
hits AS (
    SELECT n.key, n.n_terms, u.step_bucket, u."count"
    FROM needed n JOIN bucketed_unigrams u ON n.n_terms = 1 AND u.term = n.t1
    UNION ALL
    SELECT n.key, n.n_terms, p.step_bucket, p."count"
    FROM needed n JOIN bucketed_pairs p ON n.n_terms = 2 AND p.t1 = n.t1 AND p.t2 = n.t2
    UNION ALL
    SELECT n.key, n.n_terms, r.step_bucket, r."count"
    FROM needed n JOIN bucketed_triples r
      ON n.n_terms = 3 AND r.t1 = n.t1 AND r.t2 = n.t2 AND r.t3 = n.t3
)
SELECT key, n_terms, step_bucket, sum("count")::BIGINT AS "count", count(*) AS n_rows
FROM hits
GROUP BY ALL;

-- key_omega_by_step: ω of every needed key as of every checkpoint, the cumulative sum over
-- buckets <= step (0 for a key not seen yet), in the columns of 25_per_key.sql's key_omega.
CREATE OR REPLACE TABLE key_omega_by_step AS
WITH needed AS (
    SELECT DISTINCT n_terms, t1, t2, t3, key FROM selected_terms
)
SELECT c.revision, c.step, n.n_terms, n.t1, n.t2, n.t3, n.key,
       coalesce(sum(b."count"), 0)::BIGINT AS omega,
       coalesce(max(b.n_rows), 0) AS n_count_rows
FROM needed n
CROSS JOIN checkpoint_steps c
LEFT JOIN key_bucket_counts b
  ON b.key = n.key AND b.n_terms = n.n_terms AND b.step_bucket <= c.step
GROUP BY ALL;
