import sys

import pytest

from spacy_auc_ner.extras import MissingExtra, require


def test_present_module_is_returned():
    assert require("json", "plots", "x").dumps([1]) == "[1]"


def test_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(MissingExtra, match=r"^plotting needs matplotlib, which is not installed .*: pip install 'spacy-auc-ner\[plots\]'$"):
        require("matplotlib", "plots", "plotting")
