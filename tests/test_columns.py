"""Column files: each input scheme normalised to BIO, and clear errors on bad input."""
from pathlib import Path

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_auc_ner.data.columns import (
    DataError,
    Sentence,
    detect_scheme,
    parse_columns,
    read_columns,
    read_docs,
    write_columns,
    write_sentences,
)


def _write(tmp_path: Path, text: str, name: str = "in.tsv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _labels(sents):
    return [list(s.labels) for s in sents]


def test_bio_tab_separated(tmp_path):
    path = _write(tmp_path, "EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n")
    sents = read_columns(path)
    assert [list(s.tokens) for s in sents] == [["EU", "rejects", "German"], ["Peter", "Blackburn"]]
    assert _labels(sents) == [["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"]]
    assert [s.line for s in sents] == [1, 5]


def test_conll2003_style_docstart_and_extra_columns(tmp_path):
    text = (
        "-DOCSTART- -X- -X- O\n\n"
        "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
        "-DOCSTART- -X- -X- O\n\n"
        "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n"  # no trailing blank line
    )
    sents = read_columns(_write(tmp_path, text, "eng.train"))
    assert [list(s.tokens) for s in sents] == [["EU", "rejects"], ["Peter", "Blackburn"]]
    assert _labels(sents) == [["B-ORG", "O"], ["B-PER", "I-PER"]]


def test_iob1_entity_starting_with_I(tmp_path):
    # IOB1: I- starts an entity; B- only separates two adjacent entities of one type.
    text = "Peter I-PER\nBlackburn I-PER\nJohn B-PER\nand O\nBonn I-LOC\nParis I-LOC\nUS I-ORG\n\n"
    path = _write(tmp_path, text)
    expected = [["B-PER", "I-PER", "B-PER", "O", "B-LOC", "I-LOC", "B-ORG"]]
    assert _labels(read_columns(path)) == expected  # detected
    assert _labels(read_columns(path, scheme="iob1")) == expected


@pytest.mark.parametrize("scheme", ["auto", "bioes", "bilou"])
def test_bioes_and_bilou(tmp_path, scheme):
    bioes = "a\tB-PER\nb\tE-PER\nc\tS-LOC\nd\tO\ne\tB-ORG\nf\tI-ORG\ng\tE-ORG\n\n"
    bilou = bioes.replace("E-", "L-").replace("S-", "U-")
    expected = [["B-PER", "I-PER", "B-LOC", "O", "B-ORG", "I-ORG", "I-ORG"]]
    assert _labels(read_columns(_write(tmp_path, bioes, "a.tsv"), scheme=scheme)) == expected
    assert _labels(read_columns(_write(tmp_path, bilou, "b.tsv"), scheme=scheme)) == expected


def test_untyped_tags_get_the_given_type(tmp_path):
    path = _write(tmp_path, "Methanoregula\tB\nformicica\tI\nsp\tO\n\n")
    assert _labels(read_columns(path, untyped_type="Species")) == [["B-Species", "I-Species", "O"]]
    with pytest.raises(DataError, match=r"in\.tsv:1: untyped tag 'B'"):
        read_columns(path)


def test_detect_scheme():
    b, i, o = ("B", "X"), ("I", "X"), ("O", "")
    assert detect_scheme([[b, i, o]]) == "bio"
    assert detect_scheme([[i, i, b, o]]) == "iob1"
    # an I- start in a file where B- also starts entities after O: BIO with an error, not IOB1
    assert detect_scheme([[o, i], [o, b]]) == "bio"
    assert detect_scheme([[("S", "X")]]) == "bioes"


@pytest.mark.parametrize(
    "text,scheme,message",
    [
        ("a\tB-PER\nb\tX-PER\n\n", "auto", r"in\.tsv:2: label 'X-PER' fits no known scheme"),
        ("a\tPERSON\n\n", "auto", r"in\.tsv:1: label 'PERSON' fits no known scheme"),
        ("a\tB-ORG\nb\tI-PER\n\n", "auto", r"in\.tsv:2: I-PER follows B-ORG, an entity of a different type"),
        ("a\tB-ORG\n\nb\tO\nc\tI-PER\n\n", "bio", r"in\.tsv:4: I-PER follows O"),
        ("a\tI-PER\n\n", "bio", r"in\.tsv:1: I-PER starts the sentence"),
        ("a\tB-PER\nb\tO\n\n", "bioes", r"in\.tsv:2: entity PER is not closed"),
        ("a\tB-PER\nb\tI-PER\n\n", "bioes", r"in\.tsv:2: entity PER is not closed by E-/L- at the end"),
        ("a\tO\nb\tE-PER\n\n", "bioes", r"in\.tsv:2: E-PER does not continue an entity"),
        ("a\tB-PER\nb\tE-PER\n\n", "bio", r"in\.tsv:2: tag E-PER is not BIO"),
        ("a\tO\nb\n\n", "auto", r"in\.tsv:2: expected a token and a label column, found 1"),
        ("a\tx\tO\nb\tO\n\n", "auto", r"in\.tsv:2: found 2 columns, but line 1 has 3"),
        ("\n\n-DOCSTART- -X- -X- O\n\n", "auto", r"in\.tsv: no sentences found"),
        ("", "auto", r"in\.tsv: no sentences found"),
        ("a\tO\n\n", "iob2", r"in\.tsv: unknown label scheme 'iob2'"),
    ],
)
def test_bad_input_is_one_line_naming_file_and_line(tmp_path, text, scheme, message):
    with pytest.raises(DataError, match=message) as err:
        read_columns(_write(tmp_path, text), scheme=scheme)
    assert "\n" not in str(err.value)


def test_lines_end_only_at_cr_or_lf(tmp_path):
    """str.splitlines() also cut lines at \\x85, \\u2028, \\x1c...: a token holding one broke its line."""
    text = "a\u2028b\tB-X\nc\x85d\tI-X\r\ne\x1cf\tO\r\n\r\ng\tB-Y\n"
    sents = read_columns(_write(tmp_path, text))
    assert [list(s.tokens) for s in sents] == [["a\u2028b", "c\x85d", "e\x1cf"], ["g"]]
    assert _labels(sents) == [["B-X", "I-X", "O"], ["B-Y"]]


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_columns(tmp_path / "nope.tsv")


def test_round_trip_tsv_and_spacy(tmp_path):
    sents = [Sentence(("a", "b", "c"), ("B-X", "I-X", "O")), Sentence(("d",), ("B-Y",))]
    write_columns(tmp_path / "out.tsv", sents)
    assert (tmp_path / "out.tsv").read_text() == "a\tB-X\nb\tI-X\nc\tO\n\nd\tB-Y\n\n"
    assert [s[:2] for s in read_columns(tmp_path / "out.tsv")] == [s[:2] for s in sents]
    assert write_sentences(tmp_path / "out.spacy", sents) == 2
    docs = read_docs(tmp_path / "out.spacy", spacy.blank("en").vocab)
    assert [[(e.text, e.label_) for e in d.ents] for d in docs] == [[("a b", "X")], [("d", "Y")]]
    assert [[t.text for t in d] for d in docs] == [list(s.tokens) for s in sents]


# -- property: every scheme encodes the same entities, and each decodes to the same BIO ------

@st.composite
def _entity_sentences(draw):
    """Random token sequences with non-overlapping typed spans, as (length, [(start, end, type)])."""
    n = draw(st.integers(1, 12))
    spans, i = [], 0
    while i < n:
        if draw(st.booleans()):
            end = draw(st.integers(i + 1, min(n, i + 4)))
            spans.append((i, end, draw(st.sampled_from(["A", "B"]))))
            i = end
        else:
            i += 1
    return n, spans


def _encode(n, spans, scheme):
    tags = ["O"] * n
    prev_end, prev_type = None, None
    for start, end, t in spans:
        for k in range(start, end):
            if scheme == "bio":
                tags[k] = ("B-" if k == start else "I-") + t
            elif scheme == "iob1":
                adjacent = prev_end == start and prev_type == t
                tags[k] = ("B-" if k == start and adjacent else "I-") + t
            else:
                if end - start == 1:
                    tags[k] = "S-" + t
                else:
                    tags[k] = ("B-" if k == start else "E-" if k == end - 1 else "I-") + t
        prev_end, prev_type = end, t
    return tags


@settings(max_examples=150, deadline=None)
@given(st.lists(_entity_sentences(), min_size=1, max_size=4))
def test_every_scheme_decodes_to_the_same_bio(sentences):
    bio = [_encode(n, spans, "bio") for n, spans in sentences]
    for scheme in ("bio", "iob1", "bioes"):
        text = "".join("".join(f"w\t{t}\n" for t in _encode(n, spans, scheme)) + "\n" for n, spans in sentences)
        assert _labels(parse_columns(text, scheme=scheme)) == bio
