-- freqgap: checks of the inputs. Each view lists offending rows; jobs/gaps.py stops with an
-- error naming the file when any is non-empty, so that no Δ is computed from bad input.
-- Run one yourself:  SELECT * FROM check_duplicate_predictions LIMIT 10;

-- Two prediction rows for one (model, revision, task, k, seed, instance): pooling seeds
-- would count that instance twice.
CREATE OR REPLACE VIEW check_duplicate_predictions AS
SELECT model, revision, task, k, seed, instance_id, count(*) AS n_rows,
       list(DISTINCT filename ORDER BY filename) AS files
FROM predictions
GROUP BY ALL
HAVING count(*) > 1;

-- Predictions for a (task, instance_id) that the instances do not contain: they were made
-- from other instances (another counts run, another config) and have no term key.
CREATE OR REPLACE VIEW check_unknown_instances AS
SELECT p.filename, p.model, p.task, p.k, p.seed, p.instance_id
FROM predictions p
ANTI JOIN instances i ON i.task = p.task AND i.instance_id = p.instance_id;

-- Predictions without a correctness value: avg() would silently skip them.
CREATE OR REPLACE VIEW check_null_correct AS
SELECT filename, model, task, k, seed, instance_id
FROM predictions
WHERE correct IS NULL OR model IS NULL OR task IS NULL OR k IS NULL OR seed IS NULL
   OR instance_id IS NULL;

-- instance_terms rows that break the contract: arity outside 1..3, a slot filled or empty
-- against n_terms, or terms not sorted as strings.
CREATE OR REPLACE VIEW check_instance_terms AS
SELECT task, instance_id, freq_def, n_terms, t1, t2, t3
FROM instance_terms
WHERE n_terms IS NULL OR n_terms NOT IN (1, 2, 3)
   OR t1 IS NULL
   OR (n_terms >= 2) <> (t2 IS NOT NULL)
   OR (n_terms = 3) <> (t3 IS NOT NULL)
   OR t2 < t1 OR t3 < t2;

-- Two term keys for one (task, instance, definition).
CREATE OR REPLACE VIEW check_duplicate_instance_terms AS
SELECT task, instance_id, freq_def, count(*) AS n_rows
FROM instance_terms
GROUP BY ALL
HAVING count(*) > 1;

-- Instances without a term key under a definition the task has: their predictions would
-- silently drop out of that definition's Δ.
CREATE OR REPLACE VIEW check_missing_terms AS
WITH task_defs AS (SELECT DISTINCT task, freq_def FROM instance_terms)
SELECT i.task, i.instance_id, d.freq_def
FROM instances i
JOIN task_defs d ON d.task = i.task
ANTI JOIN instance_terms t
  ON t.task = i.task AND t.instance_id = i.instance_id AND t.freq_def = d.freq_def;
