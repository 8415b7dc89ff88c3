import sys

import pytest

from spacy_auc_ner.extras import MissingExtra, require


def test_present_module_is_returned():
    assert require("json", "transformers", "x").dumps([1]) == "[1]"


def test_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy_transformers", None)  # import fails as if not installed
    with pytest.raises(MissingExtra, match=r"^a transformer config needs spacy_transformers, which is not installed .*: pip install 'spacy-auc-ner\[transformers\]'$"):
        require("spacy_transformers", "transformers", "a transformer config")
