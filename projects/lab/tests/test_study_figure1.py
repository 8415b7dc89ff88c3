"""Figure 1 of the OVA paper: points from hand-made probabilities, and from a real OVA pipeline."""
import sys
from pathlib import Path

import numpy
import pytest
from spacy.training.initialize import init_nlp
from typer.testing import CliRunner

from auc_ner_lab.figure1 import confusion_shares, gold_vs_best_other, label_prefix, ova_token_probabilities, plot_figure1
from auc_ner_lab.study_cli import study_app
from spacy_auc_ner.api import method_config

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from lab_data import SENTENCES, write_toy_corpus  # noqa: E402


def test_label_prefix():
    assert label_prefix([0, 1, 2, 3, 4, 5, 6]).tolist() == ["O", "B", "I", "B", "I", "B", "I"]


def test_gold_vs_best_other_by_hand():
    probs = numpy.asarray([[0.9, 0.2, 0.1], [0.3, 0.6, 0.7], [0.5, 0.5, 0.5], [0.1, 0.1, 0.8]], dtype="f")
    gold = numpy.asarray([0, 1, -1, 2])
    p_gold, p_other, g = gold_vs_best_other(probs, gold)
    assert p_gold.tolist() == pytest.approx([0.9, 0.6, 0.8])
    assert p_other.tolist() == pytest.approx([0.2, 0.7, 0.1])
    assert g.tolist() == [0, 1, 2]
    shares = confusion_shares(p_gold, p_other)
    assert shares == pytest.approx({"correct": 2 / 3, "unclaimed": 0.0, "contested": 1 / 3, "wrong": 0.0})
    empty = gold_vs_best_other(numpy.zeros((2, 3), "f"), numpy.asarray([-1, -1]))
    assert all(len(a) == 0 for a in empty)
    with pytest.raises(ValueError, match="do not match"):
        gold_vs_best_other(probs, gold[:2])


def _init(config_name, corpora):
    overrides = {"paths.train": str(corpora / "toy" / "train.spacy"), "paths.dev": str(corpora / "toy" / "dev.spacy")}
    return init_nlp(method_config(config_name, "cpu", ROOT / "configs", overrides))


def test_figure1_from_ova_pipelines(tmp_path):
    corpora = write_toy_corpus(tmp_path / "corpus")
    test = corpora / "toy" / "test.spacy"
    nlp = _init("ova_bce", corpora)  # initialised, untrained: the geometry is what is tested
    probs, gold, columns = ova_token_probabilities(nlp, test)
    n_tokens = sum(len(t.split()) for t, _ in SENTENCES)
    assert probs.shape == (n_tokens, 7) and columns[0] == "O" and len(columns) == 7
    assert ((probs > 0) & (probs < 1)).all()
    expected = [columns.index(t) for _, tags in SENTENCES for t in tags]
    assert gold.tolist() == expected
    # the same figure through the CLI, from models on disk
    nlp.to_disk(tmp_path / "bce")
    _init("ova_auc", corpora).to_disk(tmp_path / "auc")
    out = CliRunner().invoke(
        study_app, ["figure1", f"AUC={tmp_path / 'auc'}", f"BCE={tmp_path / 'bce'}", "--data", str(test), "--out", str(tmp_path / "fig1")]
    )
    assert out.exit_code == 0, out.output
    assert "AUC: correct" in out.output and "BCE: correct" in out.output
    assert (tmp_path / "fig1.png").stat().st_size > 1000 and (tmp_path / "fig1.svg").exists()


def test_figure1_refuses_a_softmax_pipeline(tmp_path):
    corpora = write_toy_corpus(tmp_path / "corpus")
    nlp = _init("ce", corpora)
    with pytest.raises(ValueError, match="Figure 1 needs an OVA pipeline"):
        ova_token_probabilities(nlp, corpora / "toy" / "test.spacy")
    with pytest.raises(ValueError, match="has no component 'ner'"):
        ova_token_probabilities(nlp, corpora / "toy" / "test.spacy", pipe_name="ner")


def test_plot_figure1_subsamples(tmp_path):
    rng = numpy.random.default_rng(0)
    g = rng.integers(0, 5, 500)
    written = plot_figure1([("A", rng.random(500), rng.random(500), g)], tmp_path / "f", max_points=100)
    assert [p.suffix for p in written] == [".png", ".svg"]
