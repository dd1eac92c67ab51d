-- freqgap: how far Δ moves when the same predictions are binned by other counts (another
-- rule set over the same corpus: `freqgap gaps --compare-counts DIR`, docs/gaps.md). Needs
-- the gaps view of 30_gaps.sql; freqgap/gaps/compare.py fills gaps_compare.

-- gaps_compare: Δ, the seen keys and ρ of each group over the --compare-counts tables (the
-- same predictions, instances and settings; no bootstrap interval), one row per group.
CREATE TABLE IF NOT EXISTS gaps_compare (
    model VARCHAR, revision VARCHAR, task VARCHAR, k BIGINT, freq_def VARCHAR,
    delta DOUBLE, n_keys BIGINT, spearman_rho DOUBLE, withheld_reason VARCHAR
);

-- rule_set_shift: one row per group of gaps: Δ over --counts (delta), over --compare-counts
-- (delta_compare) and delta_shift = delta_compare - delta (NULL where either Δ is
-- withheld), with each side's seen keys and ρ.
CREATE OR REPLACE VIEW rule_set_shift AS
SELECT g.model, g.revision, g.task, g.k, g.freq_def,
       g.delta, c.delta AS delta_compare, c.delta - g.delta AS delta_shift,
       g.n_keys, c.n_keys AS n_keys_compare,
       g.spearman_rho, c.spearman_rho AS spearman_rho_compare,
       g.withheld_reason, c.withheld_reason AS withheld_reason_compare
FROM gaps g
JOIN gaps_compare c
  ON c.model = g.model AND c.revision IS NOT DISTINCT FROM g.revision AND c.task = g.task
 AND c.k = g.k AND c.freq_def = g.freq_def
ORDER BY g.model, g.revision, g.task, g.k, g.freq_def;
