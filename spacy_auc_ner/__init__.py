"""spaCy components and tools for AUC-maximising NER on scarce, imbalanced data.

Everything is registered through entry points (see pyproject.toml); importing this package
also registers it, for use without installation.

Layers, each importing only from those before it:
``labels`` (the BIO layout, gold extraction) -> ``ml`` (activations, CRF, decoding,
architectures) -> ``losses`` -> ``schemes`` -> ``pipeline`` (the auc_ner pipe, update
strategies, scorer) -> ``data`` (column files, corpora, statistics) -> ``training``
(registered readers, sampling, partitions) -> ``study`` (methods, specs, runner, reports)
-> ``cli``.
"""
from .pipeline import calibration, component, scoring, strategies  # noqa: F401
from . import losses  # noqa: F401
from .ml import architectures, cached, encoders, word_dropout  # noqa: F401
from .training import augmentation, readers  # noqa: F401

__version__ = "0.1.0"
