"""The ``spacy-auc-ner`` command line: data tools in :mod:`.app`, studies in :mod:`.study`."""
from .app import app

__all__ = ["app"]
