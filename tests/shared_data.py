"""The real corpora for the tests that need them: ../shared/data beside the checkout, or
$SPACY_AUC_NER_DATA; a test skips when its corpus is not there."""
import os
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("SPACY_AUC_NER_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


def shared_corpus(name: str) -> Path:
    path = SHARED_DATA / name
    if not (path / "train.tsv").exists():
        pytest.skip(f"corpus {name} not found under {SHARED_DATA} (set SPACY_AUC_NER_DATA to a folder with <corpus>/train.tsv)")
    return path
