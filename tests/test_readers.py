"""The registered readers: draws, the imbalance generator, masking, resampling, composition."""
import random
from collections import Counter
from importlib.metadata import entry_points

import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Config

from shared_data import shared_corpus
from spacy_auc_ner.data.columns import DataError, Sentence, write_sentences
from spacy_auc_ner.training.readers import (
    EntityRatioCorpus,
    LowResourceCorpus,
    MaskedEntitiesCorpus,
    ResampledCorpus,
    draw_entity_ratio,
    draw_indices,
)

READERS = ("LowResource", "EntityRatio", "MaskedEntities", "Resampled")


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _texts(examples):
    return [eg.reference.text for eg in examples]


@pytest.fixture
def numbered(tmp_path):
    """20 sentences 's0 ...'; sentence i has i % 3 entity tokens (a PER entity) and length 5."""
    sents = []
    for i in range(20):
        k = i % 3
        labels = (["B-PER"] + ["I-PER"] * (k - 1) if k else []) + ["O"] * (5 - k)
        sents.append(Sentence((f"s{i}", "a", "b", "c", "d"), tuple(labels)))
    path = tmp_path / "numbered.spacy"
    write_sentences(path, sents)
    return path


# -- LowResource ------------------------------------------------------------------------------


def test_low_resource_draw_is_seeded_prefix_of_a_permutation(nlp, numbered):
    # random.Random(0).shuffle(list(range(10))) is [7, 8, 1, 5, 3, 4, 2, 0, 9, 6] on every platform
    assert draw_indices(10, 4, seed=0) == [7, 8, 1, 5]
    assert draw_indices(10, 4, seed=0, shuffle=False) == [1, 5, 7, 8]
    reader = LowResourceCorpus(str(numbered), n=5, seed=3)
    first = _texts(reader(nlp))
    assert len(first) == len(set(first)) == 5
    assert _texts(reader(nlp)) == first  # every call
    assert _texts(LowResourceCorpus(str(numbered), n=5, seed=3)(nlp)) == first  # every instance
    assert _texts(LowResourceCorpus(str(numbered), n=5, seed=4)(nlp)) != first
    bigger = _texts(LowResourceCorpus(str(numbered), n=8, seed=3)(nlp))
    assert bigger[:5] == first  # nested sizes
    in_order = _texts(LowResourceCorpus(str(numbered), n=5, seed=3, shuffle=False)(nlp))
    assert sorted(first, key=lambda t: int(t.split()[0][1:])) == in_order


@pytest.mark.parametrize("make", [
    lambda path: LowResourceCorpus(str(path), n=5, seed=3),
    lambda path: EntityRatioCorpus(str(path), n=6, percent=20.0, seed=1),
])
def test_a_source_reads_its_file_once_and_makes_fresh_examples_of_its_draw_only(nlp, numbered, monkeypatch, make):
    """spaCy calls the training corpus every epoch and the dev corpus every evaluation: the
    file is read on the first call only, each call yields new Examples of the same sentences,
    and only the drawn sentences become Examples."""
    import spacy_auc_ner.training.readers as readers

    reads, made = [], []
    real_read, real_tokens = readers.read_docs, readers.tokens_only
    monkeypatch.setattr(readers, "read_docs", lambda *a, **k: reads.append(a[0]) or real_read(*a, **k))
    monkeypatch.setattr(readers, "tokens_only", lambda *a: made.append(1) or real_tokens(*a))
    reader = make(numbered)
    first, second = list(reader(nlp)), list(reader(nlp))
    assert len(reads) == 1
    assert _texts(first) == _texts(second) and len(made) == len(first) + len(second) < 20
    assert all(a is not b and a.predicted is not b.predicted for a, b in zip(first, second))
    assert [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in first] == \
        [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in second]
    list(reader(spacy.blank("en")))  # another pipeline's vocab: read again
    assert len(reads) == 2


def test_low_resource_predicted_doc_has_gold_tokens(nlp, numbered):
    eg = next(iter(LowResourceCorpus(str(numbered), n=1)(nlp)))
    assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
    assert not eg.predicted.ents


def test_low_resource_errors(nlp, numbered):
    with pytest.raises(DataError, match=r"numbered\.spacy: cannot draw 21 sentences from a corpus of 20"):
        list(LowResourceCorpus(str(numbered), n=21)(nlp))
    with pytest.raises(DataError, match="exactly one of 'path'"):
        list(LowResourceCorpus(n=2)(nlp))


def test_low_resource_reads_column_files(nlp, tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("a\tB-X\nb\tO\n\nc\tO\n\n")
    assert sorted(_texts(LowResourceCorpus(str(path), n=2)(nlp))) == ["a b", "c"]


# -- EntityRatio ------------------------------------------------------------------------------


def _share(examples):
    tokens = sum(len(eg.reference) for eg in examples)
    ents = sum(len(e) for eg in examples for e in eg.reference.ents)
    return 100.0 * ents / tokens


def test_entity_ratio_reaches_target_exactly_when_possible(nlp, numbered):
    # 20 sentences of 5 tokens: 10 sentences, 50 tokens; 6% = 3 entity tokens, 10% = 5
    for percent in (6.0, 10.0, 20.0):
        reader = EntityRatioCorpus(str(numbered), n=10, percent=percent, seed=1)
        egs = list(reader(nlp))
        assert len(egs) == 10 and len({eg.reference.text for eg in egs}) == 10
        assert reader.reached == pytest.approx(percent)
        assert _share(egs) == pytest.approx(percent)  # the report is true
        assert _texts(reader(nlp)) == _texts(egs)
    other = list(EntityRatioCorpus(str(numbered), n=10, percent=10.0, seed=2)(nlp))
    assert _share(other) == pytest.approx(10.0) and _texts(other) != _texts(egs)


def test_entity_ratio_mixes_entity_free_sentences():
    # bearing: 4 sentences of length 10 with 2 entity tokens; free: 6 of length 10
    lengths = numpy.full(10, 10)
    ents = numpy.asarray([2, 2, 2, 2, 0, 0, 0, 0, 0, 0])
    ids, reached = draw_entity_ratio(lengths, ents, n=5, percent=4.0, seed=0)
    # 4% of 50 tokens = 2 entity tokens: exactly one bearing sentence and four free ones
    assert reached == pytest.approx(4.0)
    assert sum(ents[ids] > 0) == 1 and len(set(ids)) == 5


def test_entity_ratio_fails_clearly_when_unreachable(nlp, numbered):
    # 6 sentences hold 2 of 5 entity tokens, 7 hold 1: at most (6 * 2 + 4) / 50 = 32%
    with pytest.raises(DataError, match=r"numbered\.spacy: cannot reach 60.0% entity tokens with 10 sentences; the closest found is 32\.00%"):
        list(EntityRatioCorpus(str(numbered), n=10, percent=60.0)(nlp))
    with pytest.raises(DataError, match="cannot draw 30 sentences from a corpus of 20"):
        list(EntityRatioCorpus(str(numbered), n=30, percent=5.0)(nlp))
    with pytest.raises(DataError, match="percent must be between 0 and 100"):
        EntityRatioCorpus(str(numbered), n=3, percent=0)


def test_entity_ratio_on_ncbi_disease(nlp):
    from spacy_auc_ner.data.columns import read_columns

    # NCBI disease train has 8.3% entity tokens and 54% entity-bearing sentences
    train = shared_corpus("ncbi_disease") / "train.tsv"
    sents = read_columns(train)
    lengths = numpy.asarray([len(s.tokens) for s in sents])
    ents = numpy.asarray([sum(lab != "O" for lab in s.labels) for s in sents])
    for n, percent in ((20, 1.0), (50, 2.0), (200, 5.0), (500, 10.0), (500, 20.0)):
        ids, reached = draw_entity_ratio(lengths, ents, n, percent, seed=n)
        assert len(set(ids)) == n
        assert 100.0 * ents[ids].sum() / lengths[ids].sum() == pytest.approx(reached)
        assert abs(reached - percent) <= 0.1 * percent
    reader = EntityRatioCorpus(str(train), n=100, percent=2.0, seed=5)
    egs = list(reader(nlp))
    assert len(egs) == 100 and _share(egs) == pytest.approx(reader.reached)
    assert abs(reader.reached - 2.0) <= 0.2


# -- MaskedEntities ---------------------------------------------------------------------------


@pytest.fixture
def many_entities(tmp_path):
    """200 sentences, each with 5 single-token entities: 1000 entities."""
    sents = [Sentence(tuple(f"w{j}" for j in range(10)), ("B-X", "O") * 5) for _ in range(200)]
    path = tmp_path / "many.spacy"
    write_sentences(path, sents)
    return path


def test_masking_rate_over_many_seeds(nlp, many_entities):
    base = LowResourceCorpus(str(many_entities), n=200, shuffle=False)
    rates = []
    for seed in range(20):
        reader = MaskedEntitiesCorpus(base, p=0.3, seed=seed)
        kept = sum(len(eg.reference.ents) for eg in reader(nlp))
        assert reader.n_entities == 1000 and reader.n_masked == 1000 - kept
        rates.append(reader.n_masked / 1000)
    # 20 000 Bernoulli(0.3) draws: sd of the mean = sqrt(0.21 / 20000) = 0.0032; allow 4 sd
    assert abs(numpy.mean(rates) - 0.3) < 4 * 0.0032
    # and each seed on its own: sd sqrt(0.21 / 1000) = 0.0145
    assert all(abs(r - 0.3) < 5 * 0.0145 for r in rates)
    assert len(set(rates)) > 1


def test_masking_is_deterministic_and_hides_whole_entities(nlp, tmp_path):
    path = tmp_path / "m.spacy"
    write_sentences(path, [Sentence(("A", "B", "x", "C", "y", "D", "E"), ("B-P", "I-P", "O", "B-L", "O", "B-O", "I-O"))] * 30)
    base = LowResourceCorpus(str(path), n=30, shuffle=False)
    reader = MaskedEntitiesCorpus(base, p=0.5, seed=7)
    first = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in reader(nlp)]
    second = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in reader(nlp)]
    assert first == second and first != [[(0, 2, "P"), (3, 4, "L"), (5, 7, "O")]] * 30
    for eg in reader(nlp):
        kept = {i for e in eg.reference.ents for i in range(e.start, e.end)}
        assert all(t.ent_iob_ == "O" for t in eg.reference if t.i not in kept)
        assert {(e.start, e.end) for e in eg.reference.ents} <= {(0, 2), (3, 4), (5, 7)}


def test_masking_hides_the_entities_whose_draw_is_below_p_by_hand(nlp, tmp_path):
    # the documented stream: one random.Random(seed).random() per gold entity, in corpus order,
    # the entity hidden when its draw is below p. random.Random(7) gives .324, .151, .651, .072,
    # .536, .366: of two sentences of 3 entities, p = .4 hides 0, 1, 3 and 5 (0-based), p = .2 only 1 and 3
    rng = random.Random(7)
    draws = [rng.random() for _ in range(6)]
    assert [round(x, 3) for x in draws] == [0.324, 0.151, 0.651, 0.072, 0.536, 0.366]
    path = tmp_path / "m.spacy"
    write_sentences(path, [Sentence(("A", "B", "x", "C", "y", "D", "E"), ("B-P", "I-P", "O", "B-L", "O", "B-O", "I-O"))] * 2)
    spans = [(0, 2, "P"), (3, 4, "L"), (5, 7, "O")]
    for p, hidden in ((0.4, {0, 1, 3, 5}), (0.2, {1, 3})):
        base = LowResourceCorpus(str(path), n=2, shuffle=False)
        got = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in MaskedEntitiesCorpus(base, p=p, seed=7)(nlp)]
        assert got == [[span for j, span in enumerate(spans) if 3 * d + j not in hidden] for d in range(2)], p


def test_masking_extremes_and_missing(nlp, many_entities):
    base = LowResourceCorpus(str(many_entities), n=10)
    assert all(len(eg.reference.ents) == 5 for eg in MaskedEntitiesCorpus(base, p=0.0)(nlp))
    egs = list(MaskedEntitiesCorpus(base, p=1.0)(nlp))
    assert all(not eg.reference.ents and {t.ent_iob_ for t in eg.reference} == {"O"} for eg in egs)
    egs = list(MaskedEntitiesCorpus(base, p=1.0, missing=True)(nlp))
    assert all([t.ent_iob_ for t in eg.reference] == ["", "O"] * 5 for eg in egs)
    with pytest.raises(DataError, match=r"p must be in \[0, 1\]"):
        MaskedEntitiesCorpus(base, p=1.5)


# -- Resampled --------------------------------------------------------------------------------


@pytest.fixture
def hand(tmp_path):
    """The hand corpus of test_resampling.py: r(PER) = 2, r(LOC) = 3."""
    sents = [
        Sentence(("s1", "a", "b", "c"), ("B-PER", "I-PER", "O", "O")),
        Sentence(("s2", "a", "b", "c"), ("B-LOC", "I-LOC", "B-PER", "O")),
        Sentence(("s3", "a", "b", "c"), ("O", "O", "O", "O")),
        Sentence(("s4", "a", "b", "c"), ("B-PER", "O", "O", "O")),
    ]
    path = tmp_path / "hand.spacy"
    write_sentences(path, sents)
    return LowResourceCorpus(str(path), n=4, shuffle=False)


@pytest.mark.parametrize(
    "method,variant,expected",
    [
        ("sC", "paper", [3, 4, 1, 2]),
        ("sCR", "paper", [3, 4, 1, 3]),
        ("sCRD", "paper", [3, 5, 1, 2]),
        ("nsCRD", "paper", [3, 5, 1, 2]),
        ("sCR", "code", [3, 3, 1, 2]),
        ("nsCRD", "code", [2, 4, 1, 2]),
    ],
)
def test_resampled_repeats_each_sentence(nlp, hand, method, variant, expected):
    reader = ResampledCorpus(hand, method=method, variant=variant, seed=0)
    egs = list(reader(nlp))
    counts = Counter(eg.reference[0].text for eg in egs)
    assert [counts[f"s{i}"] for i in range(1, 5)] == expected
    assert reader.rareness == {"LOC": 3.0, "PER": 2.0}
    assert _texts(reader(nlp)) == _texts(egs)
    in_order = [eg.reference[0].text for eg in ResampledCorpus(hand, method=method, variant=variant, shuffle=False)(nlp)]
    assert in_order == [f"s{i}" for i, k in zip(range(1, 5), expected) for _ in range(k)]


def test_resampled_rareness_comes_from_the_wrapped_corpus_once(nlp, hand):
    reader = ResampledCorpus(MaskedEntitiesCorpus(hand, p=0.0), method="sCR")
    list(reader(nlp))
    assert reader.rareness == {"LOC": 3.0, "PER": 2.0}
    with pytest.raises(DataError, match="unknown method 'CR'"):
        ResampledCorpus(hand, method="CR")


def test_resampled_base_changes_rareness(nlp, hand):
    reader = ResampledCorpus(hand, method="sCR", base=4.0)
    list(reader(nlp))
    assert reader.rareness == pytest.approx({"LOC": 1.5, "PER": 1.0})


TOO_BIG = "must be at most 2**64 - 1 = 18446744073709551615, the largest whole number of a config (JSON), not "
BAD_READER_SETTINGS = [
    # a negative seed: random.Random takes abs(seed) (-1 drew what 1 draws, and the pool command
    # refuses -1), numpy refused it only when the corpus was read, naming nothing
    ("LowResource", {"n": 2, "seed": -1}, "[LowResource.v1] seed must be a whole number >= 0, not -1"),
    ("EntityRatio", {"n": 2, "seed": -1}, "[EntityRatio.v1] seed must be a whole number >= 0, not -1"),
    ("Pool", {"n": 2, "seed": -1}, "[Pool.v1] seed must be a whole number >= 0, not -1"),
    ("MaskedEntities", {"seed": -1}, "[MaskedEntities.v1] seed must be a whole number >= 0, not -1"),
    ("Resampled", {"seed": -1}, "[Resampled.v1] seed must be a whole number >= 0, not -1"),
    ("Augmented", {"seed": -1}, "[Augmented.v1] seed must be a whole number >= 0, not -1"),
    # beyond what a config holds as JSON: a SystemError inside spaCy's check of it ([system.seed] fills them)
    ("LowResource", {"n": 2, "seed": 10**41}, f"[LowResource.v1] seed {TOO_BIG}{10**41}"),
    ("Pool", {"n": 2, "seed": 2**64}, f"[Pool.v1] seed {TOO_BIG}{2**64}"),
    ("Augmented", {"seed": 2**64}, f"[Augmented.v1] seed {TOO_BIG}{2**64}"),
    # a quoted number (n = "3" in a config) reaches the reader as the string: a TypeError
    ("LowResource", {"n": "3"}, "[LowResource.v1] n must be a whole number, at least 1, got '3'"),
    ("MaskedEntities", {"p": "0.5"}, "[MaskedEntities.v1] p must be in [0, 1], got '0.5'"),
    # a log base below 1 (negative rareness) or NaN: numpy's "repeats may not contain negative values"
    ("Resampled", {"base": 0.5}, "[Resampled.v1] the log base must be a finite number above 1, got 0.5"),
    ("Resampled", {"base": float("nan")}, "[Resampled.v1] the log base must be a finite number above 1, got nan"),
    ("Augmented", {"power": float("inf")}, "[Augmented.v1] power must be 0 or more and finite, got inf"),
    ("EntityRatio", {"n": 2, "tolerance": -0.5}, "[EntityRatio.v1] tolerance must be a number >= 0, got -0.5"),
]


@pytest.mark.parametrize("reader, settings, message", BAD_READER_SETTINGS)
def test_bad_reader_settings_are_one_line_errors_when_the_reader_is_made(nlp, numbered, reader, settings, message):
    inner = {"@readers": "spacy.Corpus.v1", "path": str(numbered), "gold_preproc": False}
    source = {"path": str(numbered)} if reader in ("LowResource", "EntityRatio", "Pool") else {"corpus": inner}
    with pytest.raises(DataError) as err:
        registry.resolve({"r": {"@readers": f"spacy_auc_ner.{reader}.v1", **source, **settings}})
    assert str(err.value) == message


def test_resampling_an_empty_corpus_is_a_one_line_error(nlp, tmp_path):
    empty = tmp_path / "empty.spacy"
    spacy.tokens.DocBin().to_disk(empty)
    reader = ResampledCorpus(lambda nlp: spacy.training.Corpus(empty)(nlp))
    with pytest.raises(DataError, match=r"^\[Resampled.v1\] the corpus it wraps gives no sentences$"):  # was numpy's reshape error
        list(reader(nlp))


def _conll_sized(seed: int = 0):
    """14,041 sentences of 14 or 15 tokens, 80 % with one or two mentions of 1-3 tokens of
    CoNLL 2003's four types at its training split's shares: its size without its text."""
    rng, out = random.Random(seed), []
    for i in range(14041):
        labels = ["O"] * (14 + i % 2)
        for start in rng.sample([0, 5, 10], rng.choice([1, 2])) if rng.random() < 0.8 else []:
            kind = rng.choices(["LOC", "MISC", "ORG", "PER"], weights=[7140, 3438, 6321, 6600])[0]
            size = rng.randint(1, 3)
            labels[start : start + size] = [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
        out.append(Sentence(tuple(f"w{j}" for j in range(len(labels))), tuple(labels)))
    return out


def test_resampling_all_of_a_conll_sized_corpus_is_fast(nlp, tmp_path):
    import time

    path = tmp_path / "train.spacy"
    write_sentences(path, _conll_sized())
    start = time.perf_counter()
    reader = ResampledCorpus(LowResourceCorpus(str(path), n=14041), method="sCRD")
    n = sum(1 for _ in reader(nlp))
    assert n == int(reader.frequencies.sum()) > 14041
    assert time.perf_counter() - start < 30  # seconds, not minutes (about 2-3 s here)


# -- composition, registration, spaCy's own ner ------------------------------------------------


CONFIG = """
[paths]
train = null

[corpora]

[corpora.train]
@readers = "spacy_auc_ner.Resampled.v1"
method = "sCRD"
seed = 1

[corpora.train.corpus]
@readers = "spacy_auc_ner.MaskedEntities.v1"
p = 0.5
seed = 2

[corpora.train.corpus.corpus]
@readers = "spacy_auc_ner.LowResource.v1"
path = ${paths.train}
n = 12
seed = 3
"""


def test_readers_compose_in_one_config_and_train_spacy_ner(nlp, numbered):
    config = Config().from_str(CONFIG, overrides={"paths.train": str(numbered)})
    reader = registry.resolve(config["corpora"])["train"]
    egs = list(reader(nlp))
    assert _texts(egs) == _texts(registry.resolve(config["corpora"])["train"](nlp))
    drawn = set(_texts(LowResourceCorpus(str(numbered), n=12, seed=3)(nlp)))
    assert set(_texts(egs)) <= drawn and len(egs) >= 12
    # usable with spaCy's own ner
    ner_nlp = spacy.blank("en")
    ner_nlp.add_pipe("ner")
    ner_nlp.initialize(lambda: reader(ner_nlp))
    losses = ner_nlp.update(list(reader(ner_nlp)))
    assert numpy.isfinite(losses["ner"])


def test_readers_are_registered_by_entry_points():
    names = {ep.name for ep in entry_points(group="spacy_readers")}
    assert {f"spacy_auc_ner.{r}.v1" for r in READERS} <= names
    for r in READERS:
        assert callable(registry.readers.get(f"spacy_auc_ner.{r}.v1"))
