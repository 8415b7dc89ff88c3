"""Augmented.v1 (Dai & Adel 2020): hand-computed seeded cases of LwTR, MR and SiS; entities
are never lost or invented; determinism; composition with other readers; errors."""
from collections import Counter
from importlib.metadata import entry_points

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from spacy_auc_ner.data.columns import DataError, Sentence, write_sentences
from spacy_auc_ner.training.augmentation import AugmentedCorpus, segment_starts
from spacy_auc_ner.training.readers import LowResourceCorpus

# The draws of the hand-computed cases (numpy's PCG64 stream, 3 decimals shown):
# default_rng([0, 0]).random(12) = .637 .270 .041 .017 .813 .913 .607 .729 .544 .935 .816 .003
# default_rng([3, 0]).random(12) = .086 .237 .801 .582 .094 .433 .479 .160 .735 .114 .391 .517


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _corpus(nlp, data):
    """A reader over (words, BIO tags) pairs; '' marks a token with missing annotation."""
    examples = [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, ents=t)) for w, t in data]
    return lambda _nlp: iter(examples)


def _rows(egs):
    return [(eg.reference.text.strip(), [t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in eg.reference]) for eg in egs]


def _copies(reader, nlp, k):
    """The augmented examples of copy k (0-based) of every sentence."""
    egs = list(reader(nlp))
    step = reader.copies + 1
    return egs[k + 1 :: step]


def test_the_draws_the_cases_rely_on():
    assert numpy.round(numpy.random.default_rng([0, 0]).random(12), 3).tolist() == [
        0.637, 0.27, 0.041, 0.017, 0.813, 0.913, 0.607, 0.729, 0.544, 0.935, 0.816, 0.003]
    assert numpy.round(numpy.random.default_rng([3, 0]).random(6), 3).tolist() == [0.086, 0.237, 0.801, 0.582, 0.094, 0.433]


def test_mention_replacement_hand_computed(nlp):
    # segments: [Aspirin treats] [breast cancer] [.] | [Colon cancer] [is rare] | [flu]
    # coins .637 .270 .041 .017 .813 .913 (p = .5): mentions 1 and 3 are replaced, 5 is not;
    # picks .607 .729 .544 .935 .816 .003; the 3 distinct Disease mentions in order of
    # appearance are breast cancer, Colon cancer, flu: floor(.729 * 3) = floor(.935 * 3) = 2
    data = [
        ("Aspirin treats breast cancer .".split(), ["O", "O", "B-D", "I-D", "O"]),
        ("Colon cancer is rare".split(), ["B-D", "I-D", "O", "O"]),
        (["flu"], ["B-D"]),
    ]
    reader = AugmentedCorpus(_corpus(nlp, data), copies=1, replace_tokens=0, replace_mentions=0.5, shuffle_segments=0, seed=0)
    assert _rows(_copies(reader, nlp, 0)) == [
        ("Aspirin treats flu .", ["O", "O", "B-D", "O"]),
        ("flu is rare", ["B-D", "O", "O"]),
        ("flu", ["B-D"]),
    ]
    # the originals come first and untouched
    egs = list(reader(nlp))
    assert _rows(egs[0::2]) == [(" ".join(w), t) for w, t in data]


def test_mention_replacement_keeps_the_spaces_around_the_segment(nlp):
    words, spaces = ["(", "breast", "cancer", ")"], [False, True, False, False]
    ref = Doc(nlp.vocab, words=words, spaces=spaces, ents=["O", "B-D", "I-D", "O"])
    other = Doc(nlp.vocab, words=["flu", "here"], spaces=[True, False], ents=["B-D", "O"])
    examples = [Example(Doc(nlp.vocab, words=words, spaces=spaces), ref), Example(Doc(nlp.vocab, words=["flu", "here"]), other)]
    reader = AugmentedCorpus(lambda _: iter(examples), copies=1, replace_tokens=0, replace_mentions=1.0, shuffle_segments=0, seed=0)
    # picks for the first sentence's mention: .729 -> floor(.729 * 2) = 1 -> flu
    first = _copies(reader, nlp, 0)[0]
    assert first.reference.text == "(flu)" and [e.text for e in first.reference.ents] == ["flu"]
    assert first.predicted.text == "(flu)"


def test_label_wise_token_replacement_hand_computed(nlp):
    # tokens a Flu b | c Cold; coins .637 .270 .041 .017 .813 (p = .5): Flu, b, c replaced.
    # O tokens (a, b, c) have cumulative weights 1 2 3, B-D tokens (Flu, Cold) 4 5 after them:
    # Flu: 3 + .607 * 2 = 4.21 -> Cold; b: .729 * 3 = 2.19 -> c; c: .544 * 3 = 1.63 -> b
    data = [("a Flu b".split(), ["O", "B-D", "O"]), ("c Cold".split(), ["O", "B-D"])]
    reader = AugmentedCorpus(_corpus(nlp, data), copies=1, replace_tokens=0.5, replace_mentions=0, shuffle_segments=0, seed=0)
    assert _rows(_copies(reader, nlp, 0)) == [("a Cold c", ["O", "B-D", "O"]), ("b Cold", ["O", "B-D"])]


@pytest.mark.parametrize("power,expected", [(1.0, "cat cat the the"), (0.0, "cat cat cat cat")])
def test_token_distribution_power(nlp, power, expected):
    # p = 1: every token replaced; picks .813 .913 .607 .729. power 1: the 3, cat 1 -> cum 3 4
    # (targets 3.25 3.65 2.43 2.92); power 0: cum 1 2 (targets 1.63 1.83 1.21 1.46)
    data = [("the the the cat".split(), ["O"] * 4)]
    reader = AugmentedCorpus(_corpus(nlp, data), copies=1, replace_tokens=1.0, replace_mentions=0, shuffle_segments=0, power=power, seed=0)
    assert _rows(_copies(reader, nlp, 0))[0][0] == expected


def test_shuffle_within_segments_hand_computed(nlp):
    # segments [a b c] [D E] [f]; coins .086 .237 .801 (p = .5): the first two are shuffled;
    # keys a .582 b .094 c .433 | D .479 E .160 -> b c a | E D; labels stay in place
    data = [("a b c D E f".split(), ["O", "O", "O", "B-X", "I-X", "O"])]
    reader = AugmentedCorpus(_corpus(nlp, data), copies=1, replace_tokens=0, replace_mentions=0, shuffle_segments=0.5, seed=3)
    assert _rows(_copies(reader, nlp, 0)) == [("b c a E D f", ["O", "O", "O", "B-X", "I-X", "O"])]


def test_segments():
    # O O B I I B O  missing missing O | B I (second sentence)
    iob = numpy.asarray([2, 2, 3, 1, 1, 3, 2, 0, 0, 2, 3, 1])
    starts = segment_starts(iob, numpy.asarray([10, 2]))
    assert numpy.flatnonzero(starts).tolist() == [0, 2, 5, 6, 7, 9, 10]


def test_separate_cycles_operations_and_chain_applies_all(nlp):
    data = [("Aspirin treats breast cancer .".split(), ["O", "O", "B-D", "I-D", "O"]), ("flu is rare".split(), ["B-D", "O", "O"])]
    only = {
        "mention": dict(replace_tokens=0, replace_mentions=0.5, shuffle_segments=0),
        "token": dict(replace_tokens=0.5, replace_mentions=0, shuffle_segments=0),
        "shuffle": dict(replace_tokens=0, replace_mentions=0, shuffle_segments=0.5),
    }
    separate = AugmentedCorpus(_corpus(nlp, data), copies=3, replace_tokens=0.5, replace_mentions=0.5, shuffle_segments=0.5, seed=4)
    assert [separate.plan(k) for k in range(4)] == [[("mention", 0.5)], [("token", 0.5)], [("shuffle", 0.5)], [("mention", 0.5)]]
    for k, op in enumerate(("mention", "token", "shuffle")):
        # copy k of the combined reader is what a reader of that operation alone draws as copy k
        alone = AugmentedCorpus(_corpus(nlp, data), copies=3, seed=4, **only[op])
        assert _rows(_copies(separate, nlp, k)) == _rows(_copies(alone, nlp, k))
    chain = AugmentedCorpus(_corpus(nlp, data), copies=2, combine="chain", seed=4)
    assert chain.plan(1) == [("mention", 0.3), ("token", 0.3), ("shuffle", 0.3)]


def _entity_signature(doc):
    return [e.label_ for e in doc.ents]


@pytest.mark.parametrize("combine", ["separate", "chain"])
def test_entities_are_never_lost_or_invented(nlp, combine):
    rng = numpy.random.default_rng(7)
    types = ["PER", "LOC", "ORG"]
    data = []
    for i in range(60):
        words, tags = [], []
        for j in range(int(rng.integers(1, 12))):
            if rng.random() < 0.3:
                t, n = types[int(rng.integers(3))], int(rng.integers(1, 4))
                words += [f"{t.lower()}{int(rng.integers(5))}" for _ in range(n)]
                tags += [f"B-{t}"] + [f"I-{t}"] * (n - 1)
            else:
                words.append(f"w{int(rng.integers(20))}")
                tags.append("O" if rng.random() < 0.9 else "")
        data.append((words, tags))
    for seed in range(5):
        reader = AugmentedCorpus(_corpus(nlp, data), copies=4, replace_tokens=0.6, replace_mentions=0.6, shuffle_segments=0.6, combine=combine, seed=seed)
        egs = list(reader(nlp))
        assert len(egs) == 5 * len(data)
        for i, (words, tags) in enumerate(data):
            original = egs[5 * i].reference
            assert [t.text for t in original] == words
            for eg in egs[5 * i + 1 : 5 * i + 5]:
                ref = eg.reference
                assert _entity_signature(ref) == _entity_signature(original)  # count, types, order
                assert [t.text for t in eg.predicted] == [t.text for t in ref] and not eg.predicted.ents
                iob = [t.ent_iob_ for t in ref]
                assert all(b != "I" or a in ("B", "I") for a, b in zip([""] + iob, iob))  # valid BIO
                # missing annotation stays missing, on the same tokens (outside mentions)
                assert Counter(iob)[""] == Counter(t.ent_iob_ for t in original)[""]


def test_missing_tokens_are_never_replaced(nlp):
    data = [("a b c".split(), ["O", "", "O"]), ("d e f".split(), ["", "O", "O"])]
    reader = AugmentedCorpus(_corpus(nlp, data), copies=3, replace_tokens=1.0, replace_mentions=0, shuffle_segments=0, seed=1)
    for k in range(3):
        rows = _copies(reader, nlp, k)
        assert rows[0].reference[1].text == "b" and rows[1].reference[0].text == "d"
        assert rows[0].reference[1].ent_iob_ == "" and {t.text for t in rows[0].reference} <= {"a", "b", "c", "e", "f"}


def test_seeded_every_call_and_more_copies_keep_the_first(nlp):
    data = [("Aspirin treats breast cancer in Paris .".split(), ["O", "O", "B-D", "I-D", "O", "B-L", "O"]),
            ("Colon cancer is rare in Rome".split(), ["B-D", "I-D", "O", "O", "O", "B-L"])]
    two = AugmentedCorpus(_corpus(nlp, data), copies=2, combine="chain", replace_tokens=0.5, replace_mentions=0.5, shuffle_segments=0.5, seed=11)
    three = AugmentedCorpus(_corpus(nlp, data), copies=3, combine="chain", replace_tokens=0.5, replace_mentions=0.5, shuffle_segments=0.5, seed=11)
    first = _rows(two(nlp))
    assert _rows(two(nlp)) == first
    assert [r for i, r in enumerate(_rows(three(nlp))) if i % 4 != 3] == first
    others = [_rows(AugmentedCorpus(_corpus(nlp, data), copies=2, combine="chain", replace_tokens=0.5, replace_mentions=0.5, shuffle_segments=0.5, seed=s)(nlp)) for s in range(12, 16)]
    assert any(o != first for o in others)


def test_zero_copies_and_empty_inputs(nlp):
    data = [("a B".split(), ["O", "B-X"])]
    assert _rows(AugmentedCorpus(_corpus(nlp, data), copies=0)(nlp)) == [("a B", ["O", "B-X"])]
    assert list(AugmentedCorpus(lambda _: iter([]), copies=2)(nlp)) == []
    empty = [Example(Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[]))]
    egs = list(AugmentedCorpus(lambda _: iter(empty + [Example(Doc(nlp.vocab, words=["x"]), Doc(nlp.vocab, words=["x"], ents=["O"]))]), copies=2)(nlp))
    assert [len(eg.reference) for eg in egs] == [0, 0, 0, 1, 1, 1]
    no_entities = _rows(AugmentedCorpus(_corpus(nlp, [("a b".split(), ["O", "O"])]), copies=1, replace_mentions=1.0, replace_tokens=0, shuffle_segments=0)(nlp))
    assert no_entities == [("a b", ["O", "O"])] * 2


def test_errors(nlp):
    base = _corpus(nlp, [("a".split(), ["O"])])
    with pytest.raises(DataError, match=r"\[Augmented.v1\] replace_tokens must be in \[0, 1\], got 1.5"):
        AugmentedCorpus(base, replace_tokens=1.5)
    with pytest.raises(DataError, match=r"combine must be one of separate, chain, got 'both'"):
        AugmentedCorpus(base, combine="both")
    with pytest.raises(DataError, match="every operation is off"):
        AugmentedCorpus(base, copies=2, replace_tokens=0, replace_mentions=0, shuffle_segments=0)
    with pytest.raises(DataError, match="copies must be 0 or more"):
        AugmentedCorpus(base, copies=-1)


CONFIG = """
[paths]
train = null

[corpora]

[corpora.train]
@readers = "spacy_auc_ner.Augmented.v1"
copies = 2
replace_tokens = 0.3
replace_mentions = 0.3
shuffle_segments = 0.3
seed = 0

[corpora.train.corpus]
@readers = "spacy_auc_ner.LowResource.v1"
path = ${paths.train}
n = 6
seed = 3
"""


def test_composes_in_a_config_and_trains_spacy_ner(nlp, tmp_path):
    path = tmp_path / "t.spacy"
    sents = [Sentence((f"s{i}", "has", "Flu", "x"), ("O", "O", "B-D", "O")) for i in range(10)]
    write_sentences(path, sents)
    config = Config().from_str(CONFIG, overrides={"paths.train": str(path)})
    reader = registry.resolve(config["corpora"])["train"]
    egs = list(reader(nlp))
    drawn = [eg.reference.text for eg in LowResourceCorpus(str(path), n=6, seed=3)(nlp)]
    assert [eg.reference.text for eg in egs[0::3]] == drawn and len(egs) == 18
    ner_nlp = spacy.blank("en")
    ner_nlp.add_pipe("ner")
    ner_nlp.initialize(lambda: reader(ner_nlp))
    losses = ner_nlp.update(list(reader(ner_nlp)))
    assert numpy.isfinite(losses["ner"])


def test_registered_by_entry_point():
    assert "spacy_auc_ner.Augmented.v1" in {ep.name for ep in entry_points(group="spacy_readers")}
    assert registry.readers.get("spacy_auc_ner.Augmented.v1") is AugmentedCorpus


def _toy_reader(nlp):
    from toy_data import TOY

    def read(_):
        for words, tags in TOY * 3:
            yield Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=tags))

    return read


@pytest.mark.parametrize("combine,digest", [
    ("separate", "744dfc2ed4d3375c87b5c5c345d8be4fabdf30795c63a84652c85a584fe1da70"),
    ("chain", "8d2c09e233510521d2f62ec89802179536ff5fe7c621ea14ce662cf991e0d46e"),
])
def test_streamed_copies_are_those_of_the_eager_reader(nlp, combine, digest):
    """Issue 25 item 10: streaming changed no example. The digests were taken from the
    reader as it was before (every copy built in memory first), seed 7, 5 copies."""
    import hashlib

    rows = [(eg.reference.text, [t.ent_iob_ + "-" + t.ent_type_ for t in eg.reference], [t.whitespace_ for t in eg.reference], eg.predicted.text)
            for eg in AugmentedCorpus(_toy_reader(nlp), copies=5, combine=combine, seed=7)(nlp)]
    assert len(rows) == 15 * 6
    assert hashlib.sha256(repr(rows).encode()).hexdigest() == digest


def test_copies_become_docs_only_as_they_are_yielded(nlp, monkeypatch):
    """Issue 25 item 10: the reader used to build every copy's Docs (copies x sentences x 2)
    before yielding its first example; now two Docs per yielded copy."""
    from spacy_auc_ner.training import augmentation

    built = []

    def counting_doc(*args, **kwargs):
        built.append(1)
        return Doc(*args, **kwargs)

    monkeypatch.setattr(augmentation, "Doc", counting_doc)
    stream = AugmentedCorpus(_toy_reader(nlp), copies=50, seed=0)(nlp)
    next(stream)  # the first original example
    assert len(built) == 0
    next(stream)  # its first copy
    assert len(built) == 2
    assert sum(1 for _ in stream) == 15 * 51 - 2 and len(built) == 2 * 15 * 50
