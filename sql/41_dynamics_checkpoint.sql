-- freqgap: the two statements that turn the ordinary gaps SQL (20_selection.sql,
-- 25_per_key.sql, 30_gaps.sql) into the gaps of one checkpoint. They are not run as a file:
-- freqgap/dynamics/gaps.py runs those files once per checkpoint with these statements in
-- place of the ones defining the same names, so Δ, its bins, interval and slope are the
-- gaps stage's own. Variable: revision (e.g. 'step512').

-- selected_predictions: only the predictions of this checkpoint.
CREATE OR REPLACE VIEW selected_predictions AS
SELECT * FROM dynamics_predictions WHERE revision = getvariable('revision');

-- key_omega: ω of each key as of this checkpoint (40_dynamics.sql), not of the whole corpus.
CREATE OR REPLACE TABLE key_omega AS
SELECT n_terms, t1, t2, t3, key, omega, n_count_rows
FROM key_omega_by_step
WHERE revision = getvariable('revision');
