"""Property: random valid column files go through the lab's stats and partition without raising
anything but the documented one-line errors: stats count what the file holds, partitions draw
whole sentences. (The file layouts, schemes and token texts a column file may have are the
library's property test, tests/test_property_files.py; here the files are BIO, as the library
writes them.)"""
import json
import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from auc_ner_lab.cli import app
from auc_ner_lab.corpora import read_sentences
from lab_helpers import one_error_line as _one_error_line
from spacy_auc_ner.api import main as package_main

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TYPES = ["PER", "LOC", "Disease", "misc-2", "B-X"]
TOKENS = st.text(st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=6).filter(lambda t: t != "-DOCSTART-")


@st.composite
def _sentence(draw):
    """(tokens, [(start, end, type)]): non-overlapping entities, adjacent ones allowed."""
    tokens = draw(st.lists(TOKENS, min_size=1, max_size=7))
    spans, i = [], 0
    while i < len(tokens):
        end = draw(st.integers(i + 1, min(len(tokens), i + 3))) if draw(st.integers(0, 2)) == 0 else None
        if end is not None:
            spans.append((i, end, draw(st.sampled_from(TYPES))))
        i = end or i + 1
    return tokens, spans


@st.composite
def _column_file(draw):
    """(text, scheme, sentences) of a valid BIO column file."""
    sentences = draw(st.lists(_sentence(), min_size=1, max_size=6))
    lines = []
    for tokens, spans in sentences:
        tags = ["O"] * len(tokens)
        for start, end, label in spans:
            tags[start:end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
        lines += [f"{token}\t{tag}" for token, tag in zip(tokens, tags)] + [""]  # token<TAB>BIO, a blank line after each sentence
    return "\n".join(lines) + "\n", "bio", sentences

runner = CliRunner()


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@settings(max_examples=30, **SETTINGS)
@given(_column_file(), st.data())
def test_valid_files_count_and_partition(column_file, data):
    text, scheme, sentences = column_file
    n_entities = sum(len(spans) for _, spans in sentences)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in.txt"
        src.write_bytes(text.encode("utf-8"))
        assert package_main(["convert", str(src), str(tmp / "out.spacy"), "--scheme", scheme]) == 0

        # stats: the same counts
        result = _invoke("stats", tmp / "out.spacy", "--json")
        assert result.exit_code == 0, result.stderr
        ((stats,),) = [c["splits"].values() for c in json.loads(result.stdout)]
        assert (stats["sentences"], stats["tokens"], stats["entities"]) == (len(sentences), sum(len(t) for t, _ in sentences), n_entities)
        assert math.isclose(stats["B%"] + stats["I%"] + stats["O%"], 100.0, abs_tol=0.02)

        # partition: draws of whole sentences; impossible requests are one-line errors
        n = len(sentences)
        fmt = data.draw(st.sampled_from(["spacy", "tsv"]))
        result = _invoke("partition", src, tmp / "parts", "--sizes", f"1,{n}", "--partitions", "2", "--format", fmt)
        assert result.exit_code == 0, result.stderr
        manifest = json.loads((tmp / "parts" / "manifest.json").read_text())
        originals = [tuple(t) for t, _ in sentences]
        for entry in manifest["files"]:
            drawn = read_sentences(tmp / "parts" / entry["path"])
            assert [s.tokens for s in drawn] == [originals[i] for i in entry["sentence_ids"]]
        assert "larger than the corpus" in _one_error_line(_invoke("partition", src, tmp / "big", "--sizes", n + 1))
        percent = data.draw(st.floats(1.0, 60.0))
        result = _invoke("partition", src, tmp / "share", "--sizes", "1", "--partitions", "1", "--entity-percent", percent)
        if result.exit_code != 0:
            assert "entity tokens" in _one_error_line(result)


