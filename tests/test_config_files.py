"""spacy_auc_ner.data.config_files: a config's text parsed once, handed out as copies."""
import pytest

from spacy_auc_ner.data import config_files
from spacy_auc_ner.data.config_files import load_config_file, parse_config_text
from spacy_auc_ner.data.files import DataError

TEXT = "[paths]\ntrain = null\n\n[training]\nmax_steps = 10\n"


def test_a_text_is_parsed_once_and_each_caller_gets_its_own_copy(monkeypatch):
    config_files._PARSED.clear()
    calls = []
    real = config_files._parse_config_text
    monkeypatch.setattr(config_files, "_parse_config_text", lambda *a: calls.append(a[1]) or real(*a))
    first = parse_config_text(TEXT, "a.cfg")
    first["training"]["max_steps"] = 99  # a caller's edit
    second = parse_config_text(TEXT, "b.cfg")
    assert second["training"]["max_steps"] == 10 and calls == ["a.cfg"]
    assert parse_config_text(TEXT, "c.cfg", {"training.max_steps": 5})["training"]["max_steps"] == 5
    assert calls == ["a.cfg", "c.cfg"]  # overrides: parsed with them


def test_a_file_edited_between_reads_is_read_as_it_is_now(tmp_path):
    path = tmp_path / "x.cfg"
    path.write_text(TEXT)
    assert load_config_file(path)["training"]["max_steps"] == 10
    path.write_text(TEXT.replace("10", "20"))
    assert load_config_file(path)["training"]["max_steps"] == 20


def test_a_bad_text_names_each_file_it_is_read_from():
    bad = "[nlp]\nlang = en\n\n[nlp]\nlang = de\n"
    for where in ("one.cfg", "two.cfg"):
        with pytest.raises(DataError, match=rf"^{where}:4: section \[nlp\] appears twice$"):
            parse_config_text(bad, where)
