"""End to end: `spacy train` with the crf and bilstm_crf methods' configs on a tiny corpus,
and identical predictions after a save and load."""
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train
from spacy.tokens import DocBin

from spacy_auc_ner.methods import method_config

CONFIGS = Path(__file__).parents[1] / "configs"
SENTENCES = [
    ("Alice lives in Paris .", [(0, 5, "PER"), (15, 20, "LOC")]),
    ("Bob Smith visited New York today .", [(0, 9, "PER"), (18, 26, "LOC")]),
    ("Nothing happened here .", []),
    ("Carol flew from Rome to Berlin .", [(0, 5, "PER"), (16, 20, "LOC"), (24, 30, "LOC")]),
    ("Dave Jones met Erin in London .", [(0, 10, "PER"), (15, 19, "PER"), (23, 29, "LOC")]),
]
TEXTS = ["Alice visited Berlin .", "", "Erin Smith lives in New York ."]
# small widths and a handful of steps: this checks the plumbing, not the accuracy
SMALL = [
    "--training.max_steps", "20", "--training.eval_frequency", "10",
    "--components.auc_ner.model.tok2vec.embed.width", "32",
    "--components.auc_ner.model.tok2vec.encode.width", "32",
    "--components.auc_ner.model.tok2vec.encode.depth", "1",
]


def write_corpus(path: Path) -> Path:
    nlp = spacy.blank("en")
    db = DocBin()
    for text, ents in SENTENCES:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(s, e, label=lab) for s, e, lab in ents]
        db.add(doc)
    db.to_disk(path)
    return path


def predictions(nlp):
    docs = list(nlp.pipe(TEXTS))
    return [
        ([(e.start, e.end, e.label_) for e in d.ents], d.spans["auc_ner"].attrs["scores"].tolist())
        for d in docs
    ]


@pytest.mark.slow
@pytest.mark.parametrize("method, extra", [("crf", []), ("bilstm_crf", ["--components.auc_ner.model.hidden_width", "16"])])
def test_spacy_train_and_round_trip(tmp_path, method, extra):
    corpus = write_corpus(tmp_path / "train.spacy")
    out = tmp_path / "model"
    args = ["--paths.train", str(corpus), "--paths.dev", str(corpus), *SMALL, *extra]
    overrides = {k.lstrip("-"): v for k, v in zip(args[::2], args[1::2])}
    overrides = {k: (int(v) if v.isdigit() else v) for k, v in overrides.items()}
    config = tmp_path / f"{method}.cfg"
    method_config(method, "cpu", CONFIGS).to_disk(config, interpolate=False)
    train(config, out, overrides=overrides)
    nlp = spacy.load(out / "model-last")
    ner = nlp.get_pipe("auc_ner")
    assert ner.cfg["scheme"] == "crf" and ner.cfg["decoder"] == "viterbi"
    head = ner.model.get_ref("output")
    # the transitions were trained (they start at 0)
    assert abs(head.get_param("crf_trans")).sum() > 0
    before = predictions(nlp)
    nlp.to_disk(tmp_path / "copy")
    assert predictions(spacy.load(tmp_path / "copy")) == before
    reloaded = spacy.blank("en")
    settings = {k: v for k, v in nlp.config["components"]["auc_ner"].items() if k != "factory"}
    reloaded.add_pipe("auc_ner", config=settings)
    reloaded.get_pipe("auc_ner").from_bytes(ner.to_bytes())
    assert predictions(reloaded) == before
