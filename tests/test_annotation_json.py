"""Annotation tools' JSON in and out: each form converts to exactly its spans, each bad input is
one line naming the file and line, and what the package writes reads back unchanged."""
import json

import pytest
from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.annotation_json import doc_record, read_annotations
from spacy_auc_ner.data.columns import read_columns, read_docs
from spacy_auc_ner.data.files import DataError

TEXT = "Germline mutations of BRCA1 predispose to breast cancer."
TEXT2 = "Ataxia telangiectasia is rare."
# what each form's records below hold: (text, [(entity text, label)])
EXPECTED = [(TEXT, [("breast cancer", "Disease")]), (TEXT2, [("Ataxia telangiectasia", "Disease")])]

FORMS = {
    "prodigy.jsonl": [{"text": TEXT, "spans": [{"start": 42, "end": 55, "label": "Disease"}], "answer": "accept"},
                      {"text": TEXT2, "spans": [{"start": 0, "end": 21, "label": "Disease"}], "meta": {"source": "x"}}],
    "doccano.jsonl": [{"id": 1, "text": TEXT, "label": [[42, 55, "Disease"]]},
                      {"id": 2, "text": TEXT2, "label": [[0, 21, "Disease"]]}],
    "doccano_entities.jsonl": [{"id": 1, "text": TEXT, "entities": [[42, 55, "Disease"]]},
                               {"id": 2, "text": TEXT2, "entities": [{"id": 7, "label": "Disease", "start_offset": 0, "end_offset": 21}]}],
}
LABEL_STUDIO = [
    {"id": 1, "data": {"text": TEXT}, "annotations": [
        {"was_cancelled": True, "result": []},
        {"was_cancelled": False, "result": [
            {"type": "labels", "value": {"start": 42, "end": 55, "text": "breast cancer", "labels": ["Disease"]}},
            {"type": "choices", "value": {"choices": ["relevant"]}}]}]},
    {"id": 2, "data": {"text": TEXT2}, "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 21, "labels": ["Disease"]}}]}]},
]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _ents(docs):
    return [(d.text, [(e.text, e.label_) for e in d.ents]) for d in docs]


def _error(path, **options):
    with pytest.raises(DataError) as err:
        read_annotations(path, Vocab(), **options)
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_jsonl_form_reads_to_exactly_its_spans(tmp_path, name):
    docs, left_out = read_annotations(_jsonl(tmp_path / name, FORMS[name]), Vocab())
    assert _ents(docs) == EXPECTED and not left_out
    # every token outside the spans is O (annotated), not missing
    assert all(t.ent_iob_ in "BIO" and t.ent_iob_ for d in docs for t in d)


def test_label_studio_json_reads_the_first_annotation_not_cancelled(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(LABEL_STUDIO))
    docs, left_out = read_annotations(path, Vocab())
    assert _ents(docs) == EXPECTED and not left_out


def test_a_label_studio_task_with_only_cancelled_annotations_is_left_out_and_counted(tmp_path):
    tasks = LABEL_STUDIO + [{"id": 3, "data": {"text": "Not done."}, "annotations": [{"was_cancelled": True, "result": []}]},
                            {"id": 4, "data": {"text": "Not started."}, "annotations": []}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    docs, left_out = read_annotations(path, Vocab())
    assert len(docs) == 2 and left_out == {"cancelled or not annotated": 2}


def test_prodigy_rejected_and_ignored_answers_are_left_out_and_the_count_says_so(tmp_path):
    records = FORMS["prodigy.jsonl"] + [{"text": "Bad.", "spans": [], "answer": "reject"},
                                       {"text": "Unsure.", "spans": [], "answer": "ignore"},
                                       {"text": "Also bad.", "spans": [], "answer": "reject"}]
    path = _jsonl(tmp_path / "p.jsonl", records)
    docs, left_out = read_annotations(path, Vocab())
    assert _ents(docs) == EXPECTED and left_out == {"reject": 2, "ignore": 1}
    result = CliRunner().invoke(app, ["convert", str(path), str(tmp_path / "p.spacy")])
    assert result.exit_code == 0
    assert result.stderr.strip() == f"Wrote 2 sentences to {tmp_path / 'p.spacy'} (3 records left out: 1 ignore, 2 reject)"


def test_given_tokens_are_the_docs_tokens(tmp_path):
    tokens = [{"text": w, "ws": ws} for w, ws in [("BRCA1", False), ("-", False), ("linked", True), ("cancer", False), (".", False)]]
    record = {"text": "BRCA1-linked cancer.", "tokens": tokens, "spans": [{"start": 13, "end": 19, "label": "Disease"}]}
    (doc,), _ = read_annotations(_jsonl(tmp_path / "t.jsonl", [record]), Vocab())
    assert [t.text for t in doc] == ["BRCA1", "-", "linked", "cancer", "."]
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [(3, 4, "Disease")]
    bad = {**record, "tokens": tokens[:-1]}
    assert _error(_jsonl(tmp_path / "b.jsonl", [bad])) == f"{tmp_path / 'b.jsonl'}:1: the \"tokens\" and their \"ws\" do not spell the \"text\""


def test_a_misaligned_span_is_refused_naming_file_line_and_span_unless_alignment_says_otherwise(tmp_path):
    # "breast cancers": the span ends inside the token "cancers"
    record = {"text": "Ok.", "spans": []}
    path = _jsonl(tmp_path / "m.jsonl", [record, {"text": "Has breast cancers.", "spans": [{"start": 4, "end": 17, "label": "D"}]}])
    assert _error(path) == (f"{path}:2: span [4, 17) 'D' 'breast cancer' does not start and end on token boundaries "
                            f"(the tokens it touches: 'breast cancers'); convert it with --alignment expand or contract to widen or narrow it")
    (_, expanded), _ = read_annotations(path, Vocab(), alignment="expand")
    assert _ents([expanded]) == [("Has breast cancers.", [("breast cancers", "D")])]
    (_, contracted), _ = read_annotations(path, Vocab(), alignment="contract")
    assert _ents([contracted]) == [("Has breast cancers.", [("breast", "D")])]
    inside = _jsonl(tmp_path / "i.jsonl", [{"text": "Has cancers.", "spans": [{"start": 5, "end": 8, "label": "D"}]}])
    assert "falls on no whole token" in _error(inside, alignment="contract")


@pytest.mark.parametrize("record, said", [
    ({"text": "abc def", "spans": [{"start": 0, "end": 30, "label": "D"}]},
     "span [0, 30) 'D' lies outside the text of 7 characters (a span needs 0 <= start < end <= 7)"),
    ({"text": "abc def", "spans": [{"start": -1, "end": 3, "label": "D"}]}, "span [-1, 3) 'D' lies outside the text"),
    ({"text": "abc def", "spans": [{"start": 3, "end": 3, "label": "D"}]}, "span [3, 3) 'D' lies outside the text"),
    ({"text": "abc def", "spans": [{"start": 0, "end": 7, "label": "D"}, {"start": 4, "end": 7, "label": "E"}]},
     "spans [0, 7) 'D' 'abc def' and [4, 7) 'E' 'def' overlap; an entity token has one label"),
    ({"text": "abc def", "label": [[0, 3, "D"], [2, 7, "D"]]}, "spans [0, 3) 'D' 'abc' and [2, 7) 'D' 'c def' overlap"),
    ({"text": "abc", "foo": 1}, "not an annotated text of a known form: expected \"spans\" (spaCy, Prodigy), \"label\" or "
                                "\"entities\" (doccano) or \"data\" with \"annotations\" (Label Studio); its keys: foo, text"),
    ({"text": "abc", "label": ["POSITIVE"]}, "\"label\" must hold [start, end, label] triples, not \"POSITIVE\""),
    ({"text": "", "spans": []}, "\"text\" must be a text that is not empty, not \"\""),
    ({"text": "abc", "spans": [{"start": 0, "end": 3}]}, "a span must be {\"start\": int, \"end\": int, \"label\": text}"),
    ([1, 2], "expected a JSON object (an annotated text), not list"),
])
def test_bad_records_are_one_line_naming_file_and_line(tmp_path, record, said):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "Fine.", "spans": []}) + "\n\n" + json.dumps(record) + "\n")
    text = _error(path)
    assert text.startswith(f"{path}:3: ") and said in text, text


def test_a_line_that_is_not_json_and_a_json_array_that_is_bad(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "a", "spans": []}\n{"text": \n')
    assert _error(path).startswith(f"{path}:2: not a JSON line (")
    export = tmp_path / "x.json"
    export.write_text(json.dumps([{"data": {"text": "abc"}, "annotations": [{"result": [
        {"value": {"start": 0, "end": 3, "labels": ["A", "B"]}}]}]}]))
    assert _error(export) == f"{export}: record 1: a Label Studio region must hold one label, not [\"A\", \"B\"]"
    nothing = _jsonl(tmp_path / "n.jsonl", [{"text": "a", "spans": [], "answer": "reject"}])
    assert _error(nothing) == f"{nothing}: no annotated record found (1 record left out: 1 reject)"


def test_what_convert_writes_reads_back_unchanged(tmp_path):
    """convert's .jsonl (spaCy/Prodigy records with tokens) gives the same Docs, and convert of it
    writes the same file again."""
    src = _jsonl(tmp_path / "d.jsonl", FORMS["doccano.jsonl"])
    runner = CliRunner()
    assert runner.invoke(app, ["convert", str(src), str(tmp_path / "a.jsonl")]).exit_code == 0
    assert runner.invoke(app, ["convert", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]).exit_code == 0
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    docs = read_docs(tmp_path / "a.jsonl", Vocab())
    assert _ents(docs) == EXPECTED
    assert [doc_record(d) for d in docs] == [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]


def test_convert_jsonl_to_columns_and_spacy(tmp_path):
    src = _jsonl(tmp_path / "p.jsonl", FORMS["prodigy.jsonl"])
    runner = CliRunner()
    assert runner.invoke(app, ["convert", str(src), str(tmp_path / "p.tsv")]).exit_code == 0
    sentences = read_columns(tmp_path / "p.tsv")
    assert sentences[0].labels[-3:] == ("B-Disease", "I-Disease", "O")
    assert runner.invoke(app, ["convert", str(src), str(tmp_path / "p.spacy")]).exit_code == 0
    assert _ents(read_docs(tmp_path / "p.spacy", Vocab())) == EXPECTED


def test_convert_refuses_options_of_another_format(tmp_path):
    src = _jsonl(tmp_path / "p.jsonl", FORMS["prodigy.jsonl"])
    result = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "o.spacy"), "--scheme", "iob1"])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: --scheme: for column files only; {src} is an annotation file, whose entities are character spans"
    tsv = tmp_path / "a.tsv"
    tsv.write_text("A\tB-X\n\n")
    result = CliRunner().invoke(app, ["convert", str(tsv), str(tmp_path / "o.spacy"), "--alignment", "expand"])
    assert result.stderr.strip() == f"Error: --alignment: for annotation files (.jsonl, .json) only; {tsv} is a column file, whose entities are token labels"
    result = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "o.spacy"), "--alignment", "loose"])
    assert result.stderr.strip() == "Error: --alignment must be one of strict, expand, contract, not 'loose'"
