"""The performance gap Δ (SPEC §5): DuckDB joins counts, instances and predictions.

The computation itself is the SQL in sql/ (readable, runnable in the duckdb CLI; Δ is defined
once there, as macros that the point estimate, each seed's Δ and every bootstrap resample go
through); this package resolves and checks the inputs, runs that SQL, draws the bootstrap
resamples (numpy) and fits the logistic slope, and writes a database, Parquet and a manifest.
Tables, the summary and the plots are drawn by freqgap.analysis.gaps.
"""
