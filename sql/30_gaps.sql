-- freqgap: the performance gap Δ of SPEC §5 steps 2-4, from the per_key table of
-- 20_per_key.sql. Needs the variables binning ('rank' | 'quantile') and bin_percent (10).
-- One group = (model, revision, task, k, freq_def).

-- task_accuracy: overall accuracy of each (model, revision, task, k), every test row,
-- seeds pooled, unseen keys included.
CREATE OR REPLACE VIEW task_accuracy AS
SELECT model, revision, task, k,
       avg(correct::DOUBLE) AS accuracy,
       count(*) AS n_rows,
       count(DISTINCT seed) AS n_seeds
FROM selected_predictions
GROUP BY ALL;

-- ranked_keys: the seen keys (ω > 0) of each group with
--   pos        1..n_keys in the order of ω; ties broken by md5(key), a fixed order that,
--              unlike the key's own spelling, is unrelated to the numbers' size;
--   bin_size   ceil(bin_percent % of n_keys), in integers;
--   q_low/high the bin_percent and 100 - bin_percent quantiles of ω, linear interpolation
--              (numpy's and pandas' default), for the quantile binning;
--   *_rank     average ranks (ties share the mean of their ranks) for Spearman's ρ.
CREATE OR REPLACE VIEW ranked_keys AS
SELECT *,
       row_number() OVER (g ORDER BY omega, md5(key)) AS pos,
       count(*) OVER g AS n_keys,
       (count(*) OVER g * getvariable('bin_percent') + 99) // 100 AS bin_size,
       quantile_cont(omega, getvariable('bin_percent') / 100) OVER g AS q_low,
       quantile_cont(omega, 1 - getvariable('bin_percent') / 100) OVER g AS q_high,
       rank() OVER (g ORDER BY omega)
         + (count(*) OVER (PARTITION BY model, revision, task, k, freq_def, omega) - 1) / 2
         AS omega_rank,
       rank() OVER (g ORDER BY accuracy)
         + (count(*) OVER (PARTITION BY model, revision, task, k, freq_def, accuracy) - 1) / 2
         AS accuracy_rank
FROM per_key
WHERE omega > 0
WINDOW g AS (PARTITION BY model, revision, task, k, freq_def);

-- key_bins: whether a key is in the bottom or the top bin.
--   rank:     the bin_size first and the bin_size last keys by pos (the default);
--   quantile: ω <= q_low and ω > q_high, i.e. the first and last of pandas.qcut(ω, 10)
--             when its edges are distinct (the original calculation). A bin can be empty:
--             then Δ is NULL here and check_empty_bins lists the group.
CREATE OR REPLACE VIEW key_bins AS
SELECT *,
       CASE getvariable('binning')
           WHEN 'rank' THEN pos <= bin_size
           WHEN 'quantile' THEN omega <= q_low
           ELSE error('binning must be rank or quantile, not ' || getvariable('binning'))
       END AS in_bottom,
       CASE getvariable('binning')
           WHEN 'rank' THEN pos > n_keys - bin_size
           WHEN 'quantile' THEN omega > q_high
           ELSE error('binning must be rank or quantile, not ' || getvariable('binning'))
       END AS in_top
FROM ranked_keys;

-- gap_points: Δ = mean accuracy of the top-bin keys - that of the bottom-bin keys, keys
-- unweighted; with the number of keys used, the unseen keys (ω = 0) left out, the bins'
-- sizes and ω boundaries, and Spearman's ρ(ω, accuracy) over the seen keys (NULL when either
-- is constant). Δ is NULL when fewer than 2 keys are seen, a bin is empty, or the two bins
-- would share keys (a bin_percent near 50 with few keys).
CREATE OR REPLACE VIEW gap_points AS
WITH all_keys AS (
    SELECT model, revision, task, k, freq_def,
           count(*) FILTER (WHERE omega = 0) AS n_unseen_keys,
           coalesce(sum(n_rows) FILTER (WHERE omega = 0), 0)::BIGINT AS n_unseen_rows
    FROM per_key
    GROUP BY ALL
),
seen AS (
    SELECT model, revision, task, k, freq_def,
           count(*) AS n_keys,
           count(*) FILTER (WHERE in_bottom) AS n_bottom,
           count(*) FILTER (WHERE in_top) AS n_top,
           avg(accuracy) FILTER (WHERE in_bottom) AS bottom_accuracy,
           avg(accuracy) FILTER (WHERE in_top) AS top_accuracy,
           max(omega) FILTER (WHERE in_bottom) AS bottom_max_omega,
           min(omega) FILTER (WHERE in_top) AS top_min_omega,
           corr(omega_rank, accuracy_rank) AS rho
    FROM key_bins
    GROUP BY ALL
)
SELECT a.model, a.revision, a.task, a.k, a.freq_def,
       t.accuracy, t.n_rows, t.n_seeds,
       coalesce(s.n_keys, 0) AS n_keys, a.n_unseen_keys, a.n_unseen_rows,
       getvariable('binning') AS binning, getvariable('bin_percent') AS bin_percent,
       coalesce(s.n_bottom, 0) AS n_bottom, coalesce(s.n_top, 0) AS n_top,
       s.bottom_accuracy, s.top_accuracy, s.bottom_max_omega, s.top_min_omega,
       CASE WHEN s.n_keys >= 2 AND s.n_bottom > 0 AND s.n_top > 0
                 AND s.n_bottom + s.n_top <= s.n_keys
            THEN s.top_accuracy - s.bottom_accuracy END AS delta,
       CASE WHEN isnan(s.rho) THEN NULL ELSE s.rho END AS spearman_rho
FROM all_keys a
LEFT JOIN seen s USING (model, revision, task, k, freq_def)
JOIN task_accuracy t USING (model, revision, task, k);

-- check_empty_bins: groups with an empty bottom or top bin (quantile binning when many keys
-- share one ω); jobs/gaps.py stops on them instead of reporting a Δ.
CREATE OR REPLACE VIEW check_empty_bins AS
SELECT model, revision, task, k, freq_def, n_keys, n_bottom, n_top
FROM gap_points
WHERE n_keys >= 2 AND (n_bottom = 0 OR n_top = 0);

-- gap_intervals: the bootstrap 95 % interval of Δ over keys. The resampling runs in numpy
-- over the (small) ranked_keys of each group (freqgap/gaps/bootstrap.py), which fills this
-- table: same seed, same interval.
CREATE TABLE IF NOT EXISTS gap_intervals (
    model VARCHAR, revision VARCHAR, task VARCHAR, k BIGINT, freq_def VARCHAR,
    ci_low DOUBLE, ci_high DOUBLE, ci_level DOUBLE,
    boot_reps BIGINT, boot_discarded BIGINT, boot_seed BIGINT
);

-- gaps: one row per group, Δ with its interval and everything reported beside it.
CREATE OR REPLACE VIEW gaps AS
SELECT g.*, i.ci_low, i.ci_high, i.ci_level, i.boot_reps, i.boot_discarded, i.boot_seed
FROM gap_points g
LEFT JOIN gap_intervals i USING (model, revision, task, k, freq_def)
ORDER BY g.model, g.revision, g.task, g.k, g.freq_def;
