import sys

import pytest

from spacy_auc_ner.extras import MissingExtra, require


def test_present_module_is_returned():
    assert require("json", "plots", "x").dumps([1]) == "[1]"


def test_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(MissingExtra, match=r"^plotting needs matplotlib, which is not installed .*: pip install 'spacy-auc-ner\[plots\]'$"):
        require("matplotlib", "plots", "plotting")


def test_study_report_without_matplotlib_is_one_line(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from spacy_auc_ner.cli.study import study_app

    rows = tmp_path / "r.jsonl"
    rows.write_text('{"cell_id": "c/ce/p0#x", "status": "ok", "corpus": "c", "method": "ce", "setting": "lowres", '
                    '"size": 10, "value": null, "partition": 0, "scores": {"ents_seqeval_micro_f": 0.5}}\n')
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = CliRunner().invoke(study_app, ["report", str(rows), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: plotting needs matplotlib")
