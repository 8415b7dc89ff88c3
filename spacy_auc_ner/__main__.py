"""``python -m spacy_auc_ner``: the same command line as ``spacy-auc-ner``."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
