-- freqgap: the QA suite's accuracy by relevant-document count (Kandpal et al. 2023), from the
-- per_key table of a gaps run over a QA suite (docs/suites.md, "QA by relevant documents").
-- Variables: qa_per_key_files (VARCHAR[]: gaps/per_key.parquet), qa_freq_def (the entity
-- pair's definition, 'subject,answer'), qa_bin_base (2 or 10), qa_z (the normal quantile
-- of the interval's level, 1.96 for 95 %). Runs as is in the duckdb CLI after SET VARIABLE.

-- qa_keys: one row per (model, revision, task, k, entity pair) with ω = the documents holding
-- both entities, its answers and right answers, and its bin: -1 for ω = 0 (shown apart: a
-- log axis has no 0), else b with base^b <= ω < base^(b+1), found from the logarithm and
-- corrected with exact powers (a float log of 1000 can fall just below 3).
CREATE OR REPLACE VIEW qa_keys AS
WITH k AS (
    SELECT model, revision, task, k, key, omega, n_correct, n_rows,
           getvariable('qa_bin_base')::BIGINT AS base,
           CASE WHEN omega > 0
                THEN floor(ln(omega) / ln(getvariable('qa_bin_base')))::BIGINT END AS b0
    FROM read_parquet(getvariable('qa_per_key_files'))
    WHERE freq_def = getvariable('qa_freq_def')
)
SELECT model, revision, task, k, key, omega, n_correct, n_rows, base,
       CASE WHEN omega = 0 THEN -1
            WHEN pow(base, b0 + 1) <= omega THEN b0 + 1
            WHEN pow(base, b0) > omega THEN b0 - 1
            ELSE b0 END AS bin
FROM k;

-- qa_bins: accuracy per (model, revision, task, k, bin): the bin's ω range lo..hi
-- (inclusive; 0..0 for the unseen pairs), its pairs (n_keys), answers (n_rows) and right
-- answers; accuracy = right / answers (every question counts once, as in Kandpal et al.'s
-- figure), with the Wilson score interval at qa_z (defined for small bins and for 0 % and
-- 100 %, where the normal approximation collapses to a point).
CREATE OR REPLACE VIEW qa_bins AS
WITH b AS (
    SELECT model, revision, task, k, bin, any_value(base) AS base,
           count(*) AS n_keys, sum(n_rows)::BIGINT AS n_rows,
           sum(n_correct)::BIGINT AS n_correct, min(omega) AS min_omega, max(omega) AS max_omega
    FROM qa_keys
    GROUP BY ALL
),
w AS (
    SELECT *, n_correct / n_rows::DOUBLE AS p, getvariable('qa_z')::DOUBLE AS z
    FROM b
)
SELECT model, revision, task, k, bin,
       CASE WHEN bin < 0 THEN 0 ELSE pow(base, bin)::BIGINT END AS lo,
       CASE WHEN bin < 0 THEN 0 ELSE pow(base, bin + 1)::BIGINT - 1 END AS hi,
       min_omega, max_omega, n_keys, n_rows, n_correct, p AS accuracy,
       (p + z * z / (2 * n_rows) - z * sqrt(p * (1 - p) / n_rows + z * z / (4 * n_rows * n_rows)))
           / (1 + z * z / n_rows) AS ci_low,
       (p + z * z / (2 * n_rows) + z * sqrt(p * (1 - p) / n_rows + z * z / (4 * n_rows * n_rows)))
           / (1 + z * z / n_rows) AS ci_high
FROM w
ORDER BY model, revision, task, k, bin;
