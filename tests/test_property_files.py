"""Property: random valid BIO / IOB1 / BIOES column files (any token text, tab or space
separated, extra columns, -DOCSTART- lines, CRLF) go through convert and a 2-step training without raising anything but the documented one-line errors, and conversion
never loses or invents an entity (issue 13.7). The lab's stats and partition commands have
the same property test (projects/lab/tests/test_lab_property_files.py)."""
import math
import tempfile
from pathlib import Path

import numpy
import spacy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.training import Corpus
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import read_docs, read_sentences

runner = CliRunner()
VOCAB = spacy.blank("xx").vocab
TYPES = ["PER", "LOC", "Disease", "misc-2", "B-X"]
# space-separated files: tokens without whitespace; tab-separated ones: any text without tab,
# CR or LF, not starting or ending with whitespace (inner spaces, \x85, \u2028, \x00 allowed)
TOKENS = st.text(st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=6).filter(lambda t: t != "-DOCSTART-")
TAB_TOKENS = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\t\r\n"), min_size=1, max_size=6).filter(
    lambda t: t == t.strip() and t and t != "-DOCSTART-"
)
TINY_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v1",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy.MultiHashEmbed.v2", "width": 8, "attrs": ["NORM"], "rows": [64],
                  "include_static_vectors": False},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 8, "depth": 1, "window_size": 1,
                   "maxout_pieces": 2},
    },
}


@st.composite
def _sentence(draw, tokens=TOKENS):
    """(tokens, [(start, end, type)]): non-overlapping entities, adjacent ones allowed."""
    n = draw(st.integers(1, 7))
    tokens = draw(st.lists(tokens, min_size=n, max_size=n))
    spans, i = [], 0
    while i < n:
        if draw(st.integers(0, 2)) == 0:
            end = draw(st.integers(i + 1, min(n, i + 3)))
            spans.append((i, end, draw(st.sampled_from(TYPES))))
            i = end
        else:
            i += 1
    return tokens, spans


def _tags(n, spans, scheme):
    tags, prev = ["O"] * n, None
    for start, end, t in spans:
        for k in range(start, end):
            if scheme == "bio":
                tags[k] = ("B-" if k == start else "I-") + t
            elif scheme == "iob1":  # B- only where an entity directly follows one of its type
                tags[k] = ("B-" if k == start and prev == (start, t) else "I-") + t
            elif end - start == 1:
                tags[k] = "S-" + t
            else:
                tags[k] = ("B-" if k == start else "E-" if k == end - 1 else "I-") + t
        prev = (end, t)
    return tags


@st.composite
def _column_file(draw):
    """(text, scheme, sentences) of a valid column file in a random layout."""
    sep = draw(st.sampled_from(["\t", " "]))
    sentences = draw(st.lists(_sentence(TAB_TOKENS if sep == "\t" else TOKENS), min_size=1, max_size=6))
    scheme = draw(st.sampled_from(["bio", "iob1", "bioes"]))
    extra = draw(st.integers(0, 2))  # POS-like columns between token and label
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [f"-DOCSTART-{sep}O", ""] if draw(st.booleans()) else []
    for tokens, spans in sentences:
        for token, tag in zip(tokens, _tags(len(tokens), spans, scheme)):
            lines.append(sep.join([token] + ["NN"] * extra + [tag]))
        lines.extend([""] * draw(st.integers(1, 2)))
    if draw(st.booleans()):
        lines.pop()  # no blank line after the last sentence
    return newline.join(lines), scheme, sentences


def _one_error_line(result):
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (result.exception, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=30, **SETTINGS)
@given(_column_file(), st.booleans())
def test_valid_files_convert_without_losing_an_entity(column_file, name_the_scheme):
    text, scheme, sentences = column_file
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in.txt"
        src.write_bytes(text.encode("utf-8"))
        scheme_args = ["--scheme", scheme] if name_the_scheme else []

        # convert: every entity kept, exactly, with its type; tokens as written
        result = _invoke("convert", src, tmp / "out.spacy", *scheme_args)
        assert result.exit_code == 0, result.stderr
        docs = read_docs(tmp / "out.spacy", VOCAB)
        assert [([t.text for t in d], [(e.start, e.end, e.label_) for e in d.ents]) for d in docs] == sentences
        assert _invoke("convert", src, tmp / "out.tsv", *scheme_args).exit_code == 0
        assert [list(s.labels) for s in read_sentences(tmp / "out.tsv")] == [_tags(len(t), s, "bio") for t, s in sentences]


@settings(max_examples=8, **SETTINGS)
@given(st.lists(_sentence(), min_size=1, max_size=5), st.sampled_from(["ova", "two_task", "softmax", "crf"]))
def test_two_training_steps_on_any_valid_file(sentences, scheme):
    """Training raises nothing, its loss and every score are finite. A corpus without any
    entity may still be refused with the one-line 'no entity labels' error until issue 13.1
    (train on data without entities, like spaCy's ner) lands."""
    text = "".join("".join(f"{tok}\t{tag}\n" for tok, tag in zip(t, _tags(len(t), s, "bio"))) + "\n" for t, s in sentences)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.tsv", Path(tmp) / "train.spacy"
        src.write_text(text, encoding="utf-8")
        assert _invoke("convert", src, out).exit_code == 0
        nlp = spacy.blank("xx")
        nlp.add_pipe("auc_ner", config={"scheme": scheme, "model": TINY_MODEL})
        examples = list(Corpus(str(out))(nlp))
        try:
            optimizer = nlp.initialize(lambda: examples)
        except ValueError as err:
            if any(s for _, s in sentences) or "no entity labels" not in str(err) or "\n" in str(err):
                raise
            return
        for _ in range(2):
            losses = nlp.update(examples, sgd=optimizer, losses={})
            assert numpy.isfinite(losses["auc_ner"])
        scores = nlp.evaluate(examples)
        assert all(math.isfinite(v) for v in scores.values() if isinstance(v, float))
