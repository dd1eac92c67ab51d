-- freqgap: the hit lists of `freqgap count --hits KEYS_FILE` (docs/counting.md, "Hit lists")
-- as views, defined by `freqgap query` for each session when the counts hold hits/: the
-- Parquet path is that of the counts where they are now, so results moved together with
-- their inputs answer as the other views do. A count without --hits has no such views.
--   SET VARIABLE hits_files = ['out/counts/hits/**/*.parquet']; .read sql/26_hits.sql

-- hits: one row per listed unit (document, sentence or training sequence) of each key of
-- the keys file, the columns as written (docs/DATA.md, hits); at most --hits-limit per key.
CREATE OR REPLACE VIEW hits AS
SELECT *
FROM read_parquet(getvariable('hits_files'), union_by_name = true);

-- hit_totals: one row per key that some unit holds: total_units and total_occurrences over
-- every unit holding it (total_occurrences is the key's count in unigrams/pairs/triples),
-- and `listed`, the rows of hits for it (fewer than total_units where --hits-limit cut).
CREATE OR REPLACE VIEW hit_totals AS
SELECT n_terms, t1, t2, t3, total_units, total_occurrences, count(*) AS listed
FROM hits
GROUP BY n_terms, t1, t2, t3, total_units, total_occurrences
ORDER BY n_terms, t1, t2, t3;
