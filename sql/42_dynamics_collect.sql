-- freqgap: after each checkpoint's gaps (41_dynamics_checkpoint.sql), keep its rows.
-- Variable: step (the checkpoint's step).

-- gaps_by_step: the gaps view of every checkpoint, with its step.
CREATE TABLE IF NOT EXISTS gaps_by_step AS
SELECT getvariable('step') AS step, * FROM gaps WHERE false;

INSERT INTO gaps_by_step SELECT getvariable('step') AS step, * FROM gaps;

-- per_key_by_step: per key and checkpoint, ω as of that step (the exposures seen so far)
-- and the accuracy there: the "how many exposures does a number need" curve pools these.
CREATE TABLE IF NOT EXISTS per_key_by_step AS
SELECT getvariable('step') AS step, * FROM per_key WHERE false;

INSERT INTO per_key_by_step SELECT getvariable('step') AS step, * FROM per_key;
