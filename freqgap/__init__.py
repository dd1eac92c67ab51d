"""freqgap: exact pretraining-corpus term counts joined with few-shot accuracy.

The package holds all logic; `jobs/` scripts are thin entry points. The contract every
stage follows is written in docs/SPEC.md (a copy of the project's SPEC with our choices).
"""

__version__ = "0.1.0"
