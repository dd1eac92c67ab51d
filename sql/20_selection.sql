-- freqgap: what one run of `make gaps` uses. Needs the views of 10_inputs.sql and the
-- variables models, tasks, freq_defs (VARCHAR[]; an empty list selects everything).

-- selected_predictions: the predictions this run uses (model and task filters).
CREATE OR REPLACE VIEW selected_predictions AS
SELECT *
FROM predictions
WHERE (len(getvariable('models')) = 0 OR list_contains(getvariable('models'), model))
  AND (len(getvariable('tasks')) = 0 OR list_contains(getvariable('tasks'), task));

-- selected_terms: the instance keys of the frequency definitions this run uses.
CREATE OR REPLACE VIEW selected_terms AS
SELECT *
FROM instance_terms
WHERE len(getvariable('freq_defs')) = 0 OR list_contains(getvariable('freq_defs'), freq_def);

-- test_rows: one row per prediction and frequency definition, with the instance's key.
CREATE OR REPLACE VIEW test_rows AS
SELECT p.model, p.revision, p.task, p.k, p.seed, p.instance_id, p.correct,
       t.freq_def, t.n_terms, t.t1, t.t2, t.t3, t.key
FROM selected_predictions p
JOIN selected_terms t ON t.task = p.task AND t.instance_id = p.instance_id;
