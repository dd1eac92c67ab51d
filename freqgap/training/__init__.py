"""Small causal LMs (GPT-NeoX, as Pythia) trained from scratch on the synthetic corpus.

They give the demo a real model whose whole pretraining corpus is counted, and make
`make simulate` possible: two models that differ only in their corpus's operand law.
"""

from freqgap.training.settings import TrainSettings, load_settings
from freqgap.training.train import train_model

__all__ = ["TrainSettings", "load_settings", "train_model"]
