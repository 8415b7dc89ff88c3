"""Why do the auc_ner heads collapse at 20 sentences (issue 23)? A dev diagnostic.

Trains one method the way a lowres_recipe cell does (the same draws: LowResource train sample
of `size` sentences with seed = partition, 300 dev sentences with seed 0, system.seed =
partition, the study's dropout/batcher/optimizer) in a plain loop, and at a few steps prints:

  dev F1               strict seqeval micro F1 of the model as it is at that step
  F1 -NORM             the same with the NORM hash table zeroed at prediction time (the model
                       sees only prefix/suffix/shape): how much it leans on word identity
  auc_new              ROC AUC of the entity margin, gold-entity tokens whose NORM never
                       occurs in the training sample against gold-O tokens (ranking ability)
  pos_new / pos_O      share of those unseen-entity / O tokens with margin > 0 (decisions)
  m_new / m_O          median margin of each group
  |NORM| / |affix|     mean L2 norm over dev tokens of the NORM block and of the
                       prefix+suffix+shape blocks of the embedding (what the encoder is fed)

  bias / F1 cal        the entity bias spacy_auc_ner.calibrate_entity_bias.v1 picks on dev and the dev ents_f
                       (spaCy's, not seqeval) with it: what a calibrated boundary recovers

margin = max over entity columns (B-*, I-*) of the head's score minus the O column's score
(auc_ner heads only: CRF emissions, OVA logits). spaCy's ner gets F1 and F1 -NORM.
`--set key=json` overrides the config, e.g. word dropout:
  --set 'components.auc_ner.model.tok2vec.embed={"@architectures": "spacy_auc_ner.MultiHashEmbed.v1", ...}'


  python scripts/diagnose_heads.py --method crf --corpus s800 --size 20 --partition 0
"""
import argparse
import sys
from pathlib import Path

import numpy
from spacy.training.initialize import init_nlp
from spacy.training.loop import create_train_batches
from spacy.util import registry, resolve_dot_names
from thinc.api import fix_random_seed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spacy_auc_ner.api import method_config, score_entities  # noqa: E402


def build(method, corpus, size, partition, overrides):
    o = {
        "paths.train": str(ROOT / "corpus" / corpus / "train.spacy"),
        "paths.dev": str(ROOT / "corpus" / corpus / "dev.spacy"),
        "corpora.train": {"@readers": "spacy_auc_ner.LowResource.v1", "n": size, "path": "${paths.train}", "seed": partition},
        "corpora.dev": {"@readers": "spacy_auc_ner.LowResource.v1", "n": 300, "path": "${paths.dev}", "seed": 0},
        "system.seed": partition,
        **overrides,
    }
    return method_config(method, "cpu", ROOT / "configs", overrides=o).interpolate()


def hash_tables(pipe):
    """The four HashEmbed layers of the pipe's tok2vec, in attrs order (NORM, PREFIX, SUFFIX, SHAPE)."""
    return [node for node in pipe.model.walk() if node.name == "hashembed"]


def block_norms(tables, docs):
    from spacy.attrs import NORM, PREFIX, SHAPE, SUFFIX

    keys = numpy.vstack([d.to_array([NORM, PREFIX, SUFFIX, SHAPE]) for d in docs]).astype("uint64")
    norms = [numpy.linalg.norm(t(numpy.ascontiguousarray(keys[:, col]), is_train=False)[0], axis=1)
             for col, t in enumerate(tables)]
    return norms[0].mean(), (norms[1] + norms[2] + norms[3]).mean() / 3


def auc(pos, neg):
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    allv = numpy.concatenate([pos, neg])
    ranks = allv.argsort().argsort() + 1.0
    return (ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def f1(nlp, examples):
    return 100 * score_entities(_predict(nlp, examples))["ents_seqeval_micro_f"]


def _predict(nlp, examples):
    from spacy.training import Example

    preds = [eg.predicted.copy() for eg in examples]
    for doc in preds:
        doc.ents = []
    for name, proc in nlp.pipeline:
        preds = list(proc.pipe(preds))
    return [Example(p, eg.reference) for p, eg in zip(preds, examples)]


def diagnose(nlp, pipe_name, dev, train_norms):
    pipe = nlp.get_pipe(pipe_name)
    tables = hash_tables(pipe)
    row = {"F1": f1(nlp, dev)}
    E = tables[0].get_param("E").copy()
    tables[0].set_param("E", E * 0)
    row["F1 -NORM"] = f1(nlp, dev)
    tables[0].set_param("E", E)
    row["|NORM|"], row["|affix|"] = block_norms(tables, [eg.predicted for eg in dev])
    if pipe_name == "auc_ner" and pipe.cfg["scheme"] in ("crf", "ova", "softmax"):
        scores = numpy.vstack([numpy.asarray(s) for s in pipe.predict([eg.predicted for eg in dev])])
        ent = [i for i, c in enumerate(pipe.columns) if c != "O"]
        margin = scores[:, ent].max(axis=1) - scores[:, pipe.columns.index("O")]
        gold_ent = numpy.concatenate([[t.ent_iob_ in ("B", "I") for t in eg.reference] for eg in dev])
        unseen = numpy.concatenate([[t.norm_ not in train_norms for t in eg.reference] for eg in dev])
        new = margin[gold_ent & unseen]
        neg = margin[~gold_ent]
        # the callback `spacy train` runs at an evaluation, on the config's corpora.dev (this `dev`)
        registry.callbacks.get("spacy_auc_ner.calibrate_entity_bias.v1")(component=pipe_name, metric="ents_f")(nlp, {"step": 0})
        cal = {"entity_bias": pipe.cfg["entity_bias"], "ents_f": score_entities(_predict(nlp, dev))["ents_f"] or 0.0}
        pipe.cfg["entity_bias"] = 0.0
        row.update({
            "bias": cal["entity_bias"], "F1 cal": 100 * cal["ents_f"],
            "auc_new": auc(new, neg), "pos_new": 100 * (new > 0).mean(), "pos_O": 100 * (neg > 0).mean(),
            "m_new": numpy.median(new), "m_O": numpy.median(neg), "n_new": len(new),
        })
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--method", default="crf")
    p.add_argument("--corpus", default="s800")
    p.add_argument("--size", type=int, default=20)
    p.add_argument("--partition", type=int, default=0)
    p.add_argument("--steps", default="0,25,50,100,200,400")
    p.add_argument("--set", nargs="*", default=[], help="dotted.key=value config overrides (JSON values)")
    a = p.parse_args()
    import json

    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    config = build(a.method, a.corpus, a.size, a.partition, overrides)
    fix_random_seed(a.partition)
    nlp = init_nlp(config)
    T = registry.resolve(config["training"])
    train_corpus, dev_corpus = resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
    dev = list(dev_corpus(nlp))
    train = list(train_corpus(nlp))
    train_norms = {t.norm_ for eg in train for t in eg.reference}
    pipe_name = nlp.pipe_names[-1]
    checkpoints = [int(s) for s in a.steps.split(",")]
    print(f"# {a.method} {a.corpus} n={a.size} p{a.partition} {overrides or ''}: {sum(len(eg.reference.ents) for eg in train)} train mentions")
    header = None
    batches = create_train_batches(nlp, train_corpus, T["batcher"], 0)
    optimizer = T["optimizer"]
    step = 0
    losses = {}
    for _, batch in batches:
        if step in checkpoints:
            row = {"step": step, "loss": losses.get(pipe_name, 0.0)}
            row.update(diagnose(nlp, pipe_name, dev, train_norms))
            if header is None:
                header = list(row)
                print(" | ".join(f"{h:>8}" for h in header))
            print(" | ".join(f"{row.get(h, float('nan')):8.2f}" for h in header), flush=True)
        if step >= checkpoints[-1]:
            break
        losses = {}
        nlp.update(batch, drop=T["dropout"], sgd=optimizer, losses=losses)
        step += 1


if __name__ == "__main__":
    main()
