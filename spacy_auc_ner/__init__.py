"""spaCy components and tools for AUC-maximising NER on scarce, imbalanced data.

Everything is registered through entry points (see pyproject.toml); importing this package
also registers it, for use without installation.
"""
from . import component, losses, models, readers, scoring, strategies  # noqa: F401

__version__ = "0.1.0"
