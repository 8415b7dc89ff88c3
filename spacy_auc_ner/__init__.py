"""spaCy components and tools for AUC-maximising NER on scarce, imbalanced data. Everything is
registered through entry points (pyproject.toml); importing the package registers it too, for
use without installation. The layers are checked by tests/test_layers.py; the public Python API
is :mod:`spacy_auc_ner.api`, each module's design notes are in docs/design.md.
"""
from . import losses, schemes  # noqa: F401
from .ml import architectures, cached, encoders, word_dropout  # noqa: F401
from .pipeline import calibration, component, scoring, strategies  # noqa: F401
from .training import augmentation, budget, pretraining, readers  # noqa: F401

__version__ = "0.1.0"
