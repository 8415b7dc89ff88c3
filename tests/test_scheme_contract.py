"""The contract every registered scheme keeps, read from spaCy's ``registry.misc`` (no hand
table) as tests/test_loss_contract.py reads the losses: for each scheme that
``spacy_auc_ner.schemes.scheme_names`` finds (the package's and the toy scheme below, which this
module registers as a user's package would):

- it is a :class:`~spacy_auc_ner.schemes.Scheme`, builds from its block with its defaults and
  validates; it offers known capabilities, consistently (an O column where it says so, sigmoid
  or softmax or crf columns, one each), and its default loss and decoder can train and decode it;
- its targets are (N, K) 0/1 on its columns, nothing for missing gold;
- on random scores it decodes valid BIO (spans inside their docs, none overlapping), its label
  distribution sums to 1 per token and its best paths have log-probabilities <= 0;
- in the ``auc_ner`` pipe with its default loss, a few training steps lower the loss, and the
  trained pipeline saved and loaded gives the same scores and entities, its block in the config;
- docs/reference.md's Schemes table names every scheme of the package with its capabilities.

The toy scheme is a whole new scheme in one module: IO tagging, one sigmoid column per entity
type plus O (no B/I distinction), adjacent tokens of a type one entity. Nothing else in the
package names it: the losses that train it are those whose needs its capabilities meet."""
import re
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry
from thinc.backends import get_array_ops

from spacy_auc_ner.capabilities import CAPABILITIES, CRF, O_COLUMN, ONE_CLASS, SIGMOID, SOFTMAX
from spacy_auc_ner.labels import MISSING, LabelSet, label_type
from spacy_auc_ner.pipeline.settings import check_trains
from spacy_auc_ner.schemes import BIOScheme, Scheme, scheme_names
from toy_data import TEXTS

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"
TOY_SCHEME = "tests.InsideOutside.v1"


@registry.misc(TOY_SCHEME)
class InsideOutside(BIOScheme):
    """IO tags: an O column and one sigmoid column per type; a run of tokens of one type is one
    entity (two adjacent entities of a type merge, IO's known limit)."""

    name = "io"
    capabilities = frozenset({SIGMOID, ONE_CLASS, O_COLUMN})

    def columns(self, labels):
        return ["O", *labels.types]

    def targets(self, gold, labels, xp):
        cls = xp.where(gold > 0, label_type(gold) + 1, xp.where(gold == 0, 0, MISSING))
        return (cls[:, None] == xp.arange(len(labels.types) + 1)[None, :]).astype("f")

    def bio_probabilities(self, scores, labels):
        """Every entity token an I-t of confidence p_t: the BIO repair opens an entity where the
        type changes, and continues it while the type stays."""
        xp = get_array_ops(scores).xp
        p = 1.0 / (1.0 + xp.exp(-scores))
        out = xp.zeros((scores.shape[0], len(labels.bio)), dtype="f")
        out[:, 0] = p[:, 0]
        out[:, 2::2] = p[:, 1:]
        return out


SCHEMES = scheme_names()
OURS = [n for n in SCHEMES if n.startswith("spacy_auc_ner.")]
LABELS = LabelSet(["A", "B"])
GOLD = numpy.asarray([0, 1, 2, 0, 3, 4, 0, MISSING, 1, 0], dtype="i")
LENGTHS = numpy.asarray([4, 0, 6], dtype="i")
KINDS = {SIGMOID, SOFTMAX, CRF}


def build(name: str) -> Scheme:
    return registry.resolve({"scheme": {"@misc": name}})["scheme"]


def default_loss(scheme: Scheme):
    return registry.resolve({"loss": dict(scheme.default_loss)})["loss"]


def test_the_walk_finds_every_scheme_and_nothing_else():
    assert OURS == ["spacy_auc_ner.CRF.v1", "spacy_auc_ner.OVA.v1", "spacy_auc_ner.Softmax.v1", "spacy_auc_ner.TwoTask.v1"]
    assert TOY_SCHEME in SCHEMES
    assert "spacy_auc_ner.GroupedByPrefix.v1" not in SCHEMES and "spacy.ngram_suggester.v1" not in SCHEMES


@pytest.mark.parametrize("name", SCHEMES)
def test_it_builds_validates_and_says_what_its_columns_are(name):
    scheme = build(name)
    assert isinstance(scheme, Scheme)
    scheme.validate("components.auc_ner.scheme")
    offers = scheme.capabilities
    assert offers <= set(CAPABILITIES) and len(offers & KINDS) == 1, offers
    assert (O_COLUMN in offers) == (getattr(scheme, "o_column", -1) >= 0)
    assert scheme.default_decoder in ("greedy", "viterbi")
    check_trains(scheme, default_loss(scheme), "components.auc_ner.loss", "components.auc_ner.scheme")
    K = len(scheme.columns(LABELS))
    assert 1 <= scheme.loss_columns(LABELS) <= K
    Y = scheme.targets(GOLD, LABELS, numpy)
    assert Y.shape == (len(GOLD), K) and set(numpy.unique(Y)) <= {0.0, 1.0}
    assert (Y[GOLD == MISSING] == 0).all()
    if ONE_CLASS in offers:
        assert (Y[GOLD >= 0].sum(axis=1) == 1).all()


def _params(scheme: Scheme, rng):
    loss = default_loss(scheme)
    K = scheme.loss_columns(LABELS)
    return {p.name: rng.normal(size=p.shape(K)).astype("f") for p in loss.params} or None


@pytest.mark.parametrize("decoder", ["greedy", "viterbi"])
@pytest.mark.parametrize("name", SCHEMES)
def test_it_decodes_valid_bio_and_scores_sentences(name, decoder):
    scheme = build(name)
    rng = numpy.random.default_rng(3)
    for _ in range(5):
        scores = (3 * rng.normal(size=(int(LENGTHS.sum()), len(scheme.columns(LABELS))))).astype("f")
        params = _params(scheme, rng)
        spans = scheme.decode(scores, LENGTHS, LABELS, decoder, params)
        taken = set()
        for d, s, e, t in zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), spans.type.tolist()):
            assert 0 <= s < e <= LENGTHS[d] and 0 <= t < len(LABELS.types)
            tokens = {(d, i) for i in range(s, e)}
            assert not tokens & taken
            taken |= tokens
        assert numpy.isfinite(spans.score).all()
        dist = scheme.label_distribution(scores, LENGTHS, LABELS, params)
        assert dist.shape == (len(GOLD), len(LABELS.bio))
        numpy.testing.assert_allclose(dist.sum(axis=1), 1.0, rtol=1e-5)
        best = scheme.best_path_log_prob(scores, LENGTHS, LABELS, params)
        assert best.shape == ((LENGTHS > 0).sum(),) and (best <= 1e-5).all()
    assert scheme.decode(scores, LENGTHS, LabelSet([]), decoder, params).start.shape == (0,)


SMALL_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v2",
    "tok2vec": {"@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 300, "window_size": 1,
                "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None},
}


@pytest.mark.parametrize("name", SCHEMES)
def test_the_pipe_trains_it_and_round_trips(name, tmp_path):
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={"scheme": {"@misc": name}, "model": SMALL_MODEL})
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TEXTS]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    seen = [nlp.update(examples, sgd=optimizer)["auc_ner"] for _ in range(24)]
    assert numpy.isfinite(seen).all() and numpy.mean(seen[-4:]) < numpy.mean(seen[:4]), seen
    assert nlp.config["components"]["auc_ner"]["scheme"]["@misc"] == name

    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.config["components"]["auc_ner"]["scheme"] == nlp.config["components"]["auc_ner"]["scheme"]
    docs = [eg.predicted for eg in examples]
    for a, b in zip(nlp.get_pipe("auc_ner").predict(docs), loaded.get_pipe("auc_ner").predict(docs)):
        numpy.testing.assert_allclose(a, b, rtol=1e-6)

    def entities(pipeline):
        return [[(e.start, e.end, e.label_) for e in doc.ents] for doc in pipeline.pipe(t for t, _ in TEXTS)]

    assert entities(nlp) == entities(loaded)


def test_the_toy_scheme_learns_the_toy_entities():
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner", config={"scheme": {"@misc": TOY_SCHEME}, "model": SMALL_MODEL})
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TEXTS]
    optimizer = nlp.initialize(lambda: examples)
    assert nlp.get_pipe("auc_ner").columns == ["O", "DISEASE", "DRUG"]
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    assert nlp.evaluate(examples)["ents_f"] == 1.0
    # the losses that need BIO columns or a softmax refuse it, naming both keys
    with pytest.raises(ValueError, match=r"^\[components.auc_ner.loss\] spacy_auc_ner.SoftmaxCE.v1 cannot train scheme 'io': it needs softmax columns, and \[components.auc_ner.scheme\] offers o_column, one_class, sigmoid$"):
        spacy.blank("en").add_pipe("auc_ner", config={"scheme": {"@misc": TOY_SCHEME}, "loss": {"@losses": "spacy_auc_ner.SoftmaxCE.v1"}})
    with pytest.raises(ValueError, match=r"^\[components.auc_ner.strategy\] 'grouped' .* needs bio columns"):
        spacy.blank("en").add_pipe("auc_ner", config={"scheme": {"@misc": TOY_SCHEME}, "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}})


def readme_schemes() -> dict:
    """{registered name: {capabilities}} from docs/reference.md's Schemes table (column 'columns offer')."""
    text = REFERENCE.read_text(encoding="utf8")
    table = next(p for p in text[text.index("## Schemes"):].split("\n\n") if p.startswith("| scheme |"))
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {row[0].strip("`"): set(re.findall(r"`(\w+)`", row[2])) for row in rows}


def test_readme_schemes_table_matches_the_registry_and_the_capabilities():
    assert readme_schemes() == {name: set(build(name).capabilities) for name in OURS}
