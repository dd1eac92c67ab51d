-- freqgap: the per-key table of SPEC §5 steps 1-2, from the views of 20_selection.sql.

-- key_omega: ω of every distinct key the instances use, looked up in the table of its
-- arity: unigrams (1 term), pairs (2), triples (3). The arity is n_terms as instance_terms
-- wrote it, so a pair of equal terms ('7','7') is looked up in pairs with t1 = t2.
-- A key absent from its table has ω = 0. n_count_rows > 1 means the count table holds a
-- key twice (a broken counts output): see check_counted_twice below.
-- This is the only step that reads the count tables: a hash join of a few thousand keys
-- against the scan of each table, so memory stays bounded whatever the table size.
-- A table, not a view, so that later queries never scan the counts again.
CREATE OR REPLACE TABLE key_omega AS
WITH needed AS (
    SELECT DISTINCT n_terms, t1, t2, t3, key FROM selected_terms
),
hits AS (
    SELECT n.key, n.n_terms, u."count"
    FROM needed n JOIN unigrams u ON n.n_terms = 1 AND u.term = n.t1
    UNION ALL
    SELECT n.key, n.n_terms, p."count"
    FROM needed n JOIN pairs p ON n.n_terms = 2 AND p.t1 = n.t1 AND p.t2 = n.t2
    UNION ALL
    SELECT n.key, n.n_terms, r."count"
    FROM needed n JOIN triples r
      ON n.n_terms = 3 AND r.t1 = n.t1 AND r.t2 = n.t2 AND r.t3 = n.t3
)
SELECT n.n_terms, n.t1, n.t2, n.t3, n.key,
       coalesce(max(h."count"), 0)::BIGINT AS omega,
       count(h."count") AS n_count_rows
FROM needed n
LEFT JOIN hits h ON h.key = n.key AND h.n_terms = n.n_terms
GROUP BY ALL;

-- check_counted_twice: keys that a count table holds in more than one row.
CREATE OR REPLACE VIEW check_counted_twice AS
SELECT CASE n_terms WHEN 1 THEN 'unigrams' WHEN 2 THEN 'pairs' ELSE 'triples' END AS dataset,
       key, n_count_rows
FROM key_omega
WHERE n_count_rows > 1;

-- per_key: SPEC §5 step 1. Seeds pooled: one row per (model, revision, task, k, frequency
-- definition, key) with ω, the mean accuracy over all its test rows and their number.
-- Keys with ω = 0 are kept here (the gaps leave them out and count them).
CREATE OR REPLACE TABLE per_key AS
SELECT r.model, r.revision, r.task, r.k, r.freq_def, r.n_terms, r.t1, r.t2, r.t3, r.key,
       o.omega,
       avg(r.correct::DOUBLE) AS accuracy,
       count(*) FILTER (WHERE r.correct) AS n_correct,
       count(*) AS n_rows,
       count(DISTINCT r.instance_id) AS n_instances,
       count(DISTINCT r.seed) AS n_seeds
FROM test_rows r
JOIN key_omega o ON o.key = r.key AND o.n_terms = r.n_terms
GROUP BY ALL
ORDER BY ALL;

-- per_key_seed: the same per seed (one row per group, seed and key): the correct and total
-- test rows of each key under one draw of the shots. The seed-aware bootstrap resamples seeds
-- from it, and each seed's own Δ (delta_seed_* in gaps) is binned from it.
CREATE OR REPLACE TABLE per_key_seed AS
SELECT r.model, r.revision, r.task, r.k, r.freq_def, r.seed, r.key, o.omega,
       count(*) FILTER (WHERE r.correct) AS n_correct,
       count(*) AS n_rows
FROM test_rows r
JOIN key_omega o ON o.key = r.key AND o.n_terms = r.n_terms
GROUP BY ALL
ORDER BY ALL;
