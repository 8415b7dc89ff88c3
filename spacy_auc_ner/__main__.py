"""``python -m spacy_auc_ner``: the same command line as ``spacy-auc-ner``."""
from .cli import app

if __name__ == "__main__":
    app(prog_name="spacy-auc-ner")
