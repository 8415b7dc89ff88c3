"""``spacy-auc-ner convert``'s work: read annotated sentences in one format and write them in
another, entities as BIO spans.

In: ``.spacy``; an annotation tool's ``.jsonl`` or ``.json`` (:mod:`.annotation_json`); a token /
label column file (BIO, IOB1, BIOES or BILOU: :mod:`.columns`). Out: ``.spacy``, ``.jsonl``
(the spaCy / Prodigy form with tokens) or a ``token<TAB>BIO`` column file. Everything is read
and checked before anything is written; an existing output is kept unless ``overwrite``.
"""
from collections import Counter
from pathlib import Path
from typing import NamedTuple, Optional

from .annotation_json import doc_record, is_annotation_file, read_annotations, write_annotations
from .columns import check_sentences_output, docs_to_sentences, is_docbin, read_columns, read_docs, sentences_to_docs, write_docs, write_sentences
from .files import DataError, PathLike


class Converted(NamedTuple):
    written: int
    left_out: Counter  # records of an annotation file left out, by why


def convert(
    input_path: PathLike,
    output_path: PathLike,
    *,
    scheme: str = "auto",
    token_column: int = 0,
    label_column: int = -1,
    untyped_type: Optional[str] = None,
    alignment: str = "strict",
    lang: str = "en",
    overwrite: bool = False,
) -> Converted:
    """Convert ``input_path`` to ``output_path`` by their suffixes (module docstring). The column
    options are for column files, ``alignment`` and ``lang`` for annotation files: given for
    another input, they are refused."""
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    from ..outputs import check_output_file

    input_path, output_path = Path(input_path), Path(output_path)
    check_sentences_output(output_path, also=(".jsonl",))
    kind = "spacy" if is_docbin(input_path) else "annotations" if is_annotation_file(input_path) else "columns"
    given = {"--scheme": scheme != "auto", "--token-column": token_column != 0, "--label-column": label_column != -1,
             "--untyped-type": untyped_type is not None, "--alignment": alignment != "strict", "--lang": lang != "en"}
    what = {"spacy": "a .spacy file, whose entities are spans", "annotations": "an annotation file, whose entities are character spans",
            "columns": "a column file, whose entities are token labels"}[kind]
    for owner, options in (("columns", ("--scheme", "--token-column", "--label-column", "--untyped-type")),
                           ("annotations", ("--alignment", "--lang"))):
        wrong = [k for k in options if given[k]]
        if wrong and kind != owner:
            files = "column files" if owner == "columns" else "annotation files (.jsonl, .json)"
            raise DataError(f"{', '.join(wrong)}: for {files} only; {input_path} is {what}")
    left_out: Counter = Counter()
    if kind == "columns":
        sentences = read_columns(input_path, scheme=scheme, token_column=token_column, label_column=label_column, untyped_type=untyped_type)
        docs = list(sentences_to_docs(sentences, Vocab()))
    elif kind == "annotations":
        docs, left_out = read_annotations(input_path, Vocab(), lang=lang, alignment=alignment)
    else:
        # the entities as BIO (a token with missing annotation is O), each token's space kept
        read = read_docs(input_path, Vocab())
        docs = [Doc(d.vocab, words=list(s.tokens), spaces=[bool(t.whitespace_) for t in d], ents=list(s.labels))
                for d, s in zip(read, docs_to_sentences(read))]
    check_output_file(output_path, [input_path], overwrite)
    if output_path.suffix == ".jsonl":
        return Converted(write_annotations(output_path, (doc_record(d) for d in docs)), left_out)
    if is_docbin(output_path):
        return Converted(write_docs(output_path, docs), left_out)
    return Converted(write_sentences(output_path, docs_to_sentences(docs)), left_out)

