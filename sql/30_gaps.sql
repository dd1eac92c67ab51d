-- freqgap: the performance gap Δ of SPEC §5 steps 2-4, from the per_key and per_key_seed
-- tables of 25_per_key.sql. Needs the variables binning ('rank' | 'quantile'), bin_percent
-- (10) and min_seen_keys (20). One group = (model, revision, task, k, freq_def).
--
-- Δ is defined once, by the two table macros rank_samples and gap_of_samples below. The point
-- estimate, each seed's own Δ and every bootstrap resample (freqgap/gaps/bootstrap.py) are all
-- "samples" passed through the same macros; other SQL (sql/40_dynamics.sql) can call them on
-- its own per-key tables.

-- task_accuracy: overall accuracy of each (model, revision, task, k), every test row,
-- seeds pooled, unseen keys included.
CREATE OR REPLACE VIEW task_accuracy AS
SELECT model, revision, task, k,
       avg(correct::DOUBLE) AS accuracy,
       count(*) AS n_rows,
       count(DISTINCT seed) AS n_seeds
FROM selected_predictions
GROUP BY ALL;

-- rank_samples(tbl): the keys of each sample in rank order. `tbl` has one row per
-- (sample_id, key) with omega > 0 and accuracy. pos = 1..n in the order of ω, ties broken by
-- md5(key): a fixed order that, unlike the key's own spelling, is unrelated to the numbers'
-- size. The output is a sample in the form gap_of_samples reads: each key occupies the
-- positions first_pos..last_pos (here one position) of n_drawn.
CREATE OR REPLACE MACRO rank_samples(tbl) AS TABLE
SELECT sample_id, key, omega, accuracy,
       row_number() OVER (PARTITION BY sample_id ORDER BY omega, md5(key)) AS first_pos,
       row_number() OVER (PARTITION BY sample_id ORDER BY omega, md5(key)) AS last_pos,
       count(*) OVER (PARTITION BY sample_id) AS n_drawn
FROM query_table(tbl);

-- bin_members(samples): how many of each row's positions fall in the bottom and in the top
-- bin. `samples` has (sample_id, omega, accuracy, first_pos, last_pos, n_drawn): a multiset
-- of n_drawn keys in rank order, a key drawn w times occupying w consecutive positions.
--   rank:     the bottom bin is positions 1..m, the top bin n-m+1..n, m = ceil(bin_percent %
--             of n) in integers.
--   quantile: the original's rule (GPTAnalyzer/AggregateResults/plot_utils.py):
--             edges = np.quantile(ω, linspace(0, 1, q + 1)), q = 100 / bin_percent, linear
--             interpolation written out as numpy computes it (virtual index h = (n - 1) · p,
--             a = value at floor(h), b = the next, t = h - floor(h); a + (b - a) t, or
--             b - (b - a)(1 - t) when t >= 0.5); edges[-1] += 1; bin = np.digitize(ω, edges),
--             left-closed: the bottom bin holds edges[0] <= ω < edges[1], the top bin
--             edges[q-1] <= ω < edges[q]. p = i · (1 / q), as linspace computes it.
CREATE OR REPLACE MACRO bin_members(samples) AS TABLE
WITH s AS (
    SELECT sample_id, omega, accuracy::DOUBLE AS accuracy, first_pos, last_pos, n_drawn,
           (n_drawn * getvariable('bin_percent') + 99) // 100 AS m,
           (n_drawn - 1) * (1 * (1::DOUBLE / (100 // getvariable('bin_percent')))) AS h_low,
           (n_drawn - 1) * ((100 // getvariable('bin_percent') - 1)
                            * (1::DOUBLE / (100 // getvariable('bin_percent')))) AS h_high
    FROM query_table(samples)
),
idx AS (
    SELECT *,
           floor(h_low)::BIGINT AS lo_low, least(floor(h_low)::BIGINT + 1, n_drawn - 1) AS hi_low,
           h_low - floor(h_low) AS t_low,
           floor(h_high)::BIGINT AS lo_high,
           least(floor(h_high)::BIGINT + 1, n_drawn - 1) AS hi_high,
           h_high - floor(h_high) AS t_high
    FROM s
),
-- the values at the 0-based sorted indices the two interior edges need
vals AS (
    SELECT sample_id,
           min(omega)::DOUBLE AS e_first,
           max(omega)::DOUBLE + 1 AS e_last,
           max(omega) FILTER (WHERE first_pos <= lo_low + 1 AND lo_low + 1 <= last_pos)::DOUBLE AS a_low,
           max(omega) FILTER (WHERE first_pos <= hi_low + 1 AND hi_low + 1 <= last_pos)::DOUBLE AS b_low,
           any_value(t_low) AS t_low,
           max(omega) FILTER (WHERE first_pos <= lo_high + 1 AND lo_high + 1 <= last_pos)::DOUBLE AS a_high,
           max(omega) FILTER (WHERE first_pos <= hi_high + 1 AND hi_high + 1 <= last_pos)::DOUBLE AS b_high,
           any_value(t_high) AS t_high
    FROM idx
    WHERE getvariable('binning') = 'quantile'
    GROUP BY sample_id
),
edges AS (
    SELECT sample_id, e_first, e_last,
           CASE WHEN t_low >= 0.5 THEN b_low - (b_low - a_low) * (1 - t_low)
                ELSE a_low + (b_low - a_low) * t_low END AS e_low,
           CASE WHEN t_high >= 0.5 THEN b_high - (b_high - a_high) * (1 - t_high)
                ELSE a_high + (b_high - a_high) * t_high END AS e_high
    FROM vals
)
SELECT s.sample_id, s.omega, s.accuracy, s.first_pos, s.last_pos, s.n_drawn, s.m,
       e.e_low AS low_edge, e.e_high AS high_edge,
       CASE getvariable('binning')
           WHEN 'rank' THEN greatest(0, least(s.last_pos, s.m) - s.first_pos + 1)
           WHEN 'quantile' THEN CASE WHEN s.omega >= e.e_first AND s.omega < e.e_low
                                     THEN s.last_pos - s.first_pos + 1 ELSE 0 END
           ELSE error('binning must be rank or quantile, not ' || getvariable('binning'))
       END AS n_in_bottom,
       CASE getvariable('binning')
           WHEN 'rank' THEN greatest(0, s.last_pos - greatest(s.first_pos, s.n_drawn - s.m + 1) + 1)
           WHEN 'quantile' THEN CASE WHEN s.omega >= e.e_high AND s.omega < e.e_last
                                     THEN s.last_pos - s.first_pos + 1 ELSE 0 END
           ELSE error('binning must be rank or quantile, not ' || getvariable('binning'))
       END AS n_in_top
FROM s
LEFT JOIN edges e USING (sample_id);

-- gap_of_samples(samples): Δ of each sample = mean accuracy of the top-bin keys - that of
-- the bottom-bin keys, keys unweighted (a key drawn twice counts twice). Withheld (NULL, with
-- the reason) when the sample has fewer than min_seen_keys keys, when the two bins would
-- share keys (a bin_percent near 50), or when a bin is empty (quantile edges that coincide,
-- where the original used 0); check_empty_bins makes the last an error for the point estimate.
CREATE OR REPLACE MACRO gap_of_samples(samples) AS TABLE
WITH b AS (
    SELECT sample_id,
           any_value(n_drawn) AS n_keys,
           sum(n_in_bottom) AS n_bottom,
           sum(n_in_top) AS n_top,
           sum(accuracy * n_in_bottom) / nullif(sum(n_in_bottom), 0) AS bottom_accuracy,
           sum(accuracy * n_in_top) / nullif(sum(n_in_top), 0) AS top_accuracy,
           max(omega) FILTER (WHERE n_in_bottom > 0) AS bottom_max_omega,
           min(omega) FILTER (WHERE n_in_top > 0) AS top_min_omega,
           any_value(low_edge) AS low_edge,
           any_value(high_edge) AS high_edge
    FROM bin_members(samples)
    GROUP BY sample_id
),
r AS (
    SELECT *,
           CASE WHEN n_keys < getvariable('min_seen_keys')
                    THEN n_keys || ' seen keys, fewer than min_seen_keys = '
                         || getvariable('min_seen_keys')
                WHEN n_bottom + n_top > n_keys
                    THEN 'the bottom and top bins would share keys (bin_percent too large)'
                WHEN n_bottom = 0 THEN 'empty bottom bin (quantile edges coincide)'
                WHEN n_top = 0 THEN 'empty top bin (quantile edges coincide)'
           END AS withheld_reason
    FROM b
)
SELECT sample_id, n_keys, n_bottom::BIGINT AS n_bottom, n_top::BIGINT AS n_top,
       bottom_accuracy, top_accuracy, bottom_max_omega, top_min_omega, low_edge, high_edge,
       CASE WHEN withheld_reason IS NULL THEN top_accuracy - bottom_accuracy END AS delta,
       withheld_reason
FROM r;

-- gap_groups: a number for each group, the sample_id of its pooled-seeds sample.
CREATE OR REPLACE TABLE gap_groups AS
SELECT row_number() OVER (ORDER BY model, revision, task, k, freq_def) AS group_id,
       model, revision, task, k, freq_def
FROM (SELECT DISTINCT model, revision, task, k, freq_def FROM per_key);

-- pooled_keys: the seen keys (ω > 0) of each group, seeds pooled; sample_id = group_id.
CREATE OR REPLACE VIEW pooled_keys AS
SELECT g.group_id AS sample_id, p.key, p.omega, p.accuracy
FROM per_key p
JOIN gap_groups g USING (model, revision, task, k, freq_def)
WHERE p.omega > 0;

-- ranked_keys: the seen keys of each group in rank order (pos), with n_keys, and average
-- ranks (ties share the mean of their ranks) of ω and accuracy for Spearman's ρ.
CREATE OR REPLACE VIEW ranked_keys AS
SELECT g.model, g.revision, g.task, g.k, g.freq_def, g.group_id, r.key, r.omega, r.accuracy,
       r.first_pos AS pos, r.n_drawn AS n_keys,
       rank() OVER (PARTITION BY r.sample_id ORDER BY r.omega)
         + (count(*) OVER (PARTITION BY r.sample_id, r.omega) - 1) / 2 AS omega_rank,
       rank() OVER (PARTITION BY r.sample_id ORDER BY r.accuracy)
         + (count(*) OVER (PARTITION BY r.sample_id, r.accuracy) - 1) / 2 AS accuracy_rank
FROM rank_samples('pooled_keys') r
JOIN gap_groups g ON g.group_id = r.sample_id;

-- rank_samples_pooled: the pooled samples as bin_members and gap_of_samples read them.
CREATE OR REPLACE VIEW rank_samples_pooled AS
SELECT sample_id, omega, accuracy, first_pos, last_pos, n_drawn FROM rank_samples('pooled_keys');

-- key_bins: each seen key of each group and whether it is in the bottom or the top bin.
CREATE OR REPLACE VIEW key_bins AS
SELECT g.model, g.revision, g.task, g.k, g.freq_def, r.key, r.omega, r.accuracy,
       m.first_pos AS pos, m.n_drawn AS n_keys, m.low_edge, m.high_edge,
       m.n_in_bottom > 0 AS in_bottom, m.n_in_top > 0 AS in_top
FROM bin_members('rank_samples_pooled') m
JOIN rank_samples('pooled_keys') r ON r.sample_id = m.sample_id AND r.first_pos = m.first_pos
JOIN gap_groups g ON g.group_id = m.sample_id;

-- seed_samples: the seen keys of each (group, seed), binned on their own: Δ of one draw of
-- the shots. sample_id numbers the (group, seed) pairs.
CREATE OR REPLACE VIEW seed_samples AS
SELECT dense_rank() OVER (ORDER BY g.group_id, s.seed) AS sample_id, g.group_id, s.seed,
       s.key, s.omega, s.n_correct / s.n_rows AS accuracy
FROM per_key_seed s
JOIN gap_groups g USING (model, revision, task, k, freq_def)
WHERE s.omega > 0;

-- seed_ranked: the same in rank order, as gap_of_samples reads them.
CREATE OR REPLACE VIEW seed_ranked AS
SELECT sample_id, omega, accuracy, first_pos, last_pos, n_drawn FROM rank_samples('seed_samples');

-- seed_gaps: Δ of each (group, seed) by the same rule, and its spread over the seeds:
-- delta_per_seed (seed, Δ) in seed order, min, max, the sample standard deviation (n - 1)
-- over the seeds with a Δ, and their number.
CREATE OR REPLACE VIEW seed_gaps AS
WITH ids AS (SELECT DISTINCT sample_id, group_id, seed FROM seed_samples),
d AS (
    SELECT i.group_id, i.seed, x.delta
    FROM gap_of_samples('seed_ranked') x
    JOIN ids i USING (sample_id)
)
SELECT group_id,
       list({'seed': seed, 'delta': delta} ORDER BY seed) AS delta_per_seed,
       count(delta) AS n_seed_deltas,
       min(delta) AS delta_seed_min,
       max(delta) AS delta_seed_max,
       stddev_samp(delta) AS delta_seed_sd
FROM d
GROUP BY group_id;

-- gap_points: Δ of each group (its pooled sample) with the number of keys used, the unseen
-- keys (ω = 0) left out, the bins' sizes and ω boundaries, the quantile edges, Spearman's
-- ρ(ω, accuracy) over the seen keys (NULL when either is constant or Δ is withheld), the
-- reason when Δ is withheld, and the per-seed Δ.
CREATE OR REPLACE VIEW gap_points AS
WITH all_keys AS (
    SELECT model, revision, task, k, freq_def,
           count(*) FILTER (WHERE omega = 0) AS n_unseen_keys,
           coalesce(sum(n_rows) FILTER (WHERE omega = 0), 0)::BIGINT AS n_unseen_rows
    FROM per_key
    GROUP BY ALL
),
-- ρ = Pearson's r of the ranks, from exact integer sums of the doubled (integral) ranks:
-- corr() sums doubles in thread order, so a rerun could differ in the last bits.
rank_sums AS (
    SELECT group_id, count(*)::HUGEINT AS n,
           sum(x) AS sx, sum(y) AS sy, sum(x * y) AS sxy, sum(x * x) AS sxx, sum(y * y) AS syy
    FROM (SELECT group_id, (2 * omega_rank)::BIGINT::HUGEINT AS x,
                 (2 * accuracy_rank)::BIGINT::HUGEINT AS y FROM ranked_keys)
    GROUP BY group_id
),
rho AS (
    SELECT group_id,
           CASE WHEN n * sxx = sx * sx OR n * syy = sy * sy THEN 'NaN'::DOUBLE
                ELSE (n * sxy - sx * sy)::DOUBLE
                     / sqrt((n * sxx - sx * sx)::DOUBLE * (n * syy - sy * sy)::DOUBLE) END AS rho
    FROM rank_sums
)
SELECT a.model, a.revision, a.task, a.k, a.freq_def,
       t.accuracy, t.n_rows, t.n_seeds,
       coalesce(x.n_keys, 0) AS n_keys, a.n_unseen_keys, a.n_unseen_rows,
       getvariable('binning') AS binning, getvariable('bin_percent') AS bin_percent,
       getvariable('min_seen_keys') AS min_seen_keys,
       coalesce(x.n_bottom, 0) AS n_bottom, coalesce(x.n_top, 0) AS n_top,
       x.bottom_accuracy, x.top_accuracy, x.bottom_max_omega, x.top_min_omega,
       x.low_edge, x.high_edge,
       x.delta,
       CASE WHEN x.delta IS NULL OR isnan(r.rho) THEN NULL ELSE r.rho END AS spearman_rho,
       coalesce(x.withheld_reason, '0 seen keys, fewer than min_seen_keys = '
                                   || getvariable('min_seen_keys')) AS withheld_reason_raw,
       sg.delta_per_seed, coalesce(sg.n_seed_deltas, 0) AS n_seed_deltas,
       sg.delta_seed_min, sg.delta_seed_max, sg.delta_seed_sd
FROM all_keys a
JOIN gap_groups g USING (model, revision, task, k, freq_def)
JOIN task_accuracy t USING (model, revision, task, k)
LEFT JOIN gap_of_samples('rank_samples_pooled') x ON x.sample_id = g.group_id
LEFT JOIN rho r ON r.group_id = g.group_id
LEFT JOIN seed_gaps sg ON sg.group_id = g.group_id;

-- check_empty_bins: groups with enough keys whose bottom or top bin is empty (quantile
-- binning when many keys share one ω, where the original silently used 0); jobs/gaps.py
-- stops on them instead of reporting a Δ.
CREATE OR REPLACE VIEW check_empty_bins AS
SELECT model, revision, task, k, freq_def, n_keys, n_bottom, n_top, low_edge, high_edge
FROM gap_points
WHERE withheld_reason_raw LIKE 'empty%';

-- gap_intervals: the bootstrap interval of Δ, one row per group. The resamples are drawn in
-- numpy (freqgap/gaps/bootstrap.py: which keys, and for seeds+keys which seeds, each
-- resample holds) and binned by gap_of_samples above; the percentile interval of their Δ
-- fills this table. ci_kind: 'keys' or 'seeds+keys'. Same seed, same interval.
CREATE TABLE IF NOT EXISTS gap_intervals (
    model VARCHAR, revision VARCHAR, task VARCHAR, k BIGINT, freq_def VARCHAR,
    ci_low DOUBLE, ci_high DOUBLE, ci_level DOUBLE, ci_kind VARCHAR,
    boot_reps BIGINT, boot_discarded BIGINT, boot_seed BIGINT
);

-- gap_logistic: the second effect size, one row per group: a logistic regression of each
-- test row's correctness on log10 ω over the rows with ω > 0 (freqgap/gaps/logistic.py, an
-- unpenalised maximum-likelihood fit by Newton's method): logit_slope = change in log-odds
-- of a correct answer per decade (10x) of ω, with a 95 % Wald interval.
CREATE TABLE IF NOT EXISTS gap_logistic (
    model VARCHAR, revision VARCHAR, task VARCHAR, k BIGINT, freq_def VARCHAR,
    logit_intercept DOUBLE, logit_slope DOUBLE, logit_slope_se DOUBLE,
    logit_slope_low DOUBLE, logit_slope_high DOUBLE, logit_n_rows BIGINT, logit_note VARCHAR
);

-- gaps: one row per group, Δ with its interval and everything reported beside it. A group
-- whose Δ is withheld (withheld_reason) has no ρ, interval or slope either.
CREATE OR REPLACE VIEW gaps AS
SELECT g.* EXCLUDE (withheld_reason_raw, delta_per_seed, n_seed_deltas, delta_seed_min,
                    delta_seed_max, delta_seed_sd),
       CASE WHEN g.delta IS NULL THEN g.withheld_reason_raw END AS withheld_reason,
       i.ci_low, i.ci_high, i.ci_level, i.ci_kind, i.boot_reps, i.boot_discarded, i.boot_seed,
       g.delta_per_seed, g.n_seed_deltas, g.delta_seed_min, g.delta_seed_max, g.delta_seed_sd,
       CASE WHEN g.delta IS NOT NULL THEN l.logit_intercept END AS logit_intercept,
       CASE WHEN g.delta IS NOT NULL THEN l.logit_slope END AS logit_slope,
       CASE WHEN g.delta IS NOT NULL THEN l.logit_slope_se END AS logit_slope_se,
       CASE WHEN g.delta IS NOT NULL THEN l.logit_slope_low END AS logit_slope_low,
       CASE WHEN g.delta IS NOT NULL THEN l.logit_slope_high END AS logit_slope_high,
       l.logit_n_rows, l.logit_note
FROM gap_points g
LEFT JOIN gap_intervals i USING (model, revision, task, k, freq_def)
LEFT JOIN gap_logistic l USING (model, revision, task, k, freq_def)
ORDER BY g.model, g.revision, g.task, g.k, g.freq_def;
