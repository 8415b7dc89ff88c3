"""scripts/evidence.py: the recipe ablation's README tables, checked against hand-computed
ratios, paired t-tests and intervals on a three-partition toy study."""
import importlib.util
import json
from pathlib import Path

import pytest

from auc_ner_lab.spec import load_spec

ROOT = Path(__file__).parents[1]
_spec = importlib.util.spec_from_file_location("evidence", ROOT / "scripts" / "evidence.py")
evidence = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(evidence)

# test F1 and dev F1 per partition; crf has no dev score on partition 2
TEST = {"spacy_ner": [0.2, 0.3, 0.4], "crf": [0.3, 0.3, 0.5]}
DEV = {"spacy_ner": [0.1, 0.2, 0.3], "crf": [0.2, 0.2, None]}


@pytest.fixture
def toy_root(tmp_path, monkeypatch):
    (tmp_path / "studies").mkdir()
    (tmp_path / "results").mkdir()
    spec = tmp_path / "studies" / "toy.yaml"
    spec.write_text(
        "name: toy\ncorpora: [toy]\nsizes: [20]\npartitions: 3\nmethods: [spacy_ner, crf]\n"
        f"metric: ents_seqeval_micro_f\nconfigs_dir: {ROOT / 'configs'}\n"
    )
    lines = []
    for cell in load_spec(spec).cells():
        dev = DEV[cell.method][cell.partition]
        scores = {"ents_seqeval_micro_f": TEST[cell.method][cell.partition],
                  "dev_scores": {} if dev is None else {"ents_seqeval_micro_f": dev}}
        lines.append(json.dumps({**cell.describe(), "status": "ok", "scores": scores, "seconds": 10.0 * (1 + cell.partition)}))
    (tmp_path / "results" / "toy.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(evidence, "ROOT", tmp_path)
    return tmp_path


def _row(table: str, method: str) -> list:
    line = next(x for x in table.splitlines() if x.startswith(f"| `{method}` |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_ratio_table_by_hand(toy_root):
    table = evidence.ratio_table("toy", "spacy_ner")
    # crf - spacy_ner = [0.1, 0, 0.1]: mean 0.0667, sd 0.0577, t = 2.0 on 2 df, p = 0.1835;
    # the ratio of the means 0.3667 / 0.3 = 1.22
    assert _row(table, "crf") == ["`crf`", "36.7 (×1.22, p=0.184)", "×1.22 (p=0.184, n=3)", "20.0 (×1.33)", "20"]
    # the baseline: its own mean and dev F1 over all its cells; crf's dev over the two cells it
    # shares with it (0.2 against 0.15)
    assert _row(table, "spacy_ner") == ["`spacy_ner`", "30.0 (n=3)", "–", "20.0", "20"]
    assert "(6 of 6 cells)" in table


def test_contrast_table_by_hand(toy_root):
    table = evidence.contrast_table("toy", [("the CRF", "crf", "spacy_ner"), ("nothing yet", "crf", "missing")])
    # 95 % interval: 0.0667 +- t(0.975, 2 df) 4.303 * 0.0577 / sqrt(3) = [-0.077, +0.210]
    assert "| the CRF | `crf` vs `spacy_ner` | +6.7 [-7.7, +21.0] | ×1.22 | p=0.184 (n=3) |" in table
    assert "| nothing yet | `crf` vs `missing` | – | – | – (n=0) |" in table
