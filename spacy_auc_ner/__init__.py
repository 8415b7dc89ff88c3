"""spaCy components and tools for AUC-maximising NER on scarce, imbalanced data.

Everything is registered through entry points (see pyproject.toml); importing this package
also registers it, for use without installation.

Layers, each importing only from its own and those before it (tests/test_layers.py checks):
``labels``, ``extras`` -> ``data`` (files, column I/O, gold arrays) -> ``ml`` (activations,
CRF, decoding, architectures) -> ``losses`` -> ``schemes`` -> ``pipeline`` (the auc_ner pipe,
update strategies, scorer) -> ``training`` (registered readers, resampling, augmentation,
pretraining, self-training, the recipe), ``methods`` (the method configs) -> ``cli``.
The studies that compare the methods are the lab's, a spaCy project in projects/lab; nothing
here imports it.
"""
from .pipeline import calibration, component, scoring, strategies  # noqa: F401
from . import losses  # noqa: F401
from .ml import architectures, cached, encoders, word_dropout  # noqa: F401
from .training import augmentation, readers  # noqa: F401

__version__ = "0.1.0"
