# Every figure and table the README and docs/ show, drawn again from the stages' results
# by the scripts in analysis/ (thin over freqgap/analysis/, as jobs/ is over the stages).
# A result that is missing is made first: out/counts and results/ by `make demo`,
# results/dynamics by `make dynamics` (~6 min). Figures: out/reports/counts.png,
# docs/img/gaps/*.png, docs/img/dynamics_*.png; the tables are printed.

.PHONY: figures

figures: setup ## redraw every figure and table of the README and docs/ (analysis/*.py; runs demo/dynamics first if their results are missing)
	@test -f results/_manifest.json || $(MAKE) --no-print-directory demo
	@test -f results/dynamics/_manifest.json || $(MAKE) --no-print-directory dynamics
	$(PY) analysis/count_report.py out/counts out/reports/counts.png
	$(PY) analysis/gaps_figures.py results docs/img/gaps
	$(PY) analysis/dynamics_figures.py results/dynamics docs/img
