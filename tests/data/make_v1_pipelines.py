"""Make the saved v1 pipelines of tests/data/v1_pipelines (run once, with the code of commit
6536b05, before the learned loss parameters moved from the head's fixed list to the loss).

Each pipeline is the auc_ner pipe on `spacy_auc_ner.TokenScorer.v1` with a deliberately tiny
tok2vec (width 8, 64-row tables), trained for 40 updates on the toy corpus of
tests/toy_data.py. `expected.json` holds the entities and span scores each one predicts on
TEXTS; tests/test_v1_pipelines.py checks that the current code loads them with `spacy.load`
and predicts the same.

    python tests/data/make_v1_pipelines.py
"""
import json
import sys
from pathlib import Path

import spacy

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from toy_data import TOY, make_examples  # noqa: E402

OUT = HERE / "v1_pipelines"
TEXTS = ["Mary met Anna in Rome .", "Aspirin treats breast cancer in Paris .", "John Smith lives in Berlin", ""]
TINY_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v1",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 8,
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [64, 64, 64, 64],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 8,
            "depth": 1,
            "window_size": 1,
            "maxout_pieces": 2,
        },
    },
}
PIPELINES = {
    # the learned AUC margin loss named in the config, as the shipped configs do
    "ova_auc": {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.AUCMargin.v1", "mode": "learned"}},
    # loss and decoder left null: the scheme's defaults (CRF NLL, Viterbi)
    "crf": {"scheme": "crf"},
    # three types: the type head, and a, b, alpha of shape (nO,) of which the loss used two
    "two_task": {"scheme": "two_task"},
}


def predictions(nlp):
    return [
        {"ents": [[e.start, e.end, e.label_] for e in doc.ents], "scores": doc.spans["auc_ner"].attrs["scores"].tolist()}
        for doc in nlp.pipe(TEXTS)
    ]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    expected = {"texts": TEXTS}
    for name, config in PIPELINES.items():
        spacy.util.fix_random_seed(0)
        nlp = spacy.blank("en")
        nlp.add_pipe("auc_ner", config={**config, "model": TINY_MODEL})
        examples = make_examples(nlp, TOY)
        optimizer = nlp.initialize(lambda: examples)
        for _ in range(40):
            nlp.update(examples, sgd=optimizer)
        nlp.to_disk(OUT / name)
        expected[name] = predictions(nlp)
        print(name, expected[name])
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
