"""The real corpora for the tests that need them (token<TAB>BIO `<corpus>/train.tsv`), found where
a checkout has them: $SPACY_AUC_NER_DATA, ../shared/data beside the checkout, or the project's
assets/ (where README's first command, `spacy project run all`, puts NCBI-disease). A test
skips only when its corpus is in none of them."""
import os
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS: List[Path] = [Path(os.environ["SPACY_AUC_NER_DATA"])] if os.environ.get("SPACY_AUC_NER_DATA") else []
FOLDERS += [ROOT.parent / "shared" / "data", ROOT / "assets"]


def find_corpus(name: str) -> Optional[Path]:
    """The first folder's `name/`, with its train.tsv, or None."""
    return next((folder / name for folder in FOLDERS if (folder / name / "train.tsv").is_file()), None)


def shared_corpus(name: str) -> Path:
    path = find_corpus(name)
    if path is None:
        pytest.skip(f"corpus {name} not found under {', '.join(map(str, FOLDERS))} (`spacy project run corpus` fetches NCBI-disease)")
    return path
