"""Tables, plots and reports: the one home of presentation code.

Modules here take plain data (frames, dicts, paths) and never import a stage, so any stage
or workflow can use them without an import cycle. Thin scripts in the top-level
`analysis/` folder call them from the command line.
"""
