"""The performance gap Δ (SPEC §5): DuckDB joins counts, instances and predictions.

The computation itself is the SQL in sql/ (readable, runnable in the duckdb CLI); this
package resolves and checks the inputs, runs that SQL, adds the bootstrap intervals
(numpy over the small per-key table), and writes tables, plots, a database and a manifest.
"""
