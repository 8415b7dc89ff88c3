"""Unlabeled text: the pool of self-training and the raw text of pretraining. Read from
``.txt`` (a text a line), ``.jsonl`` (``{"text": ...}`` a line, what ``spacy.JsonlCorpus.v1``
reads) or ``.spacy`` (tokens and spaces kept); written as the sentences of a corpus that a
low-resource draw leaves out (`write_pool`, the file of ``spacy_auc_ner.Pool.v1``), without their entities.
"""
import json
import re
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..data.columns import DataError, read_docs, tokens_only, write_docs
from ..data.files import PathLike, check_seed, read_text, write_text
from ..outputs import check_output_file
from .readers import pool_indices

PoolItem = Union[str, Tuple[List[str], List[bool]]]  # a text, or a sentence's tokens and spaces
POOL_SUFFIXES = (".txt", ".jsonl", ".spacy")
# the last field of a line of a token/label column file: O, a typed tag of BIO, IOB1, BIOES or
# BILOU (B-Disease), or a bare B or I (an untyped corpus)
_LABEL = re.compile(r"O|[BI]|[BIESLU]-\S+")
COLUMN_CHECK_LINES = 20  # the first non-empty lines of a .txt file that `check_not_columns` reads


class PoolText(NamedTuple):
    """A text of the pool and where it comes from: its 1-based line (of a ``.spacy`` file: its
    Doc's position) and, from a ``.jsonl`` line, its ``meta`` (None when it has none)."""

    item: PoolItem
    line: int
    meta: Any = None


def read_pool(path: PathLike) -> List[PoolItem]:
    """The texts of an unlabeled pool (``.txt``: a text a line; ``.jsonl``: ``{"text": ...}`` a
    line; ``.spacy``: tokens and spaces); blank lines are skipped, a bad line is ``file:line: ...``,
    and a .txt file that is a token/label column file is refused (`check_not_columns`)."""
    return [text.item for text in read_pool_texts(path)]


def read_pool_texts(path: PathLike) -> List[PoolText]:
    """`read_pool`'s texts with their lines and ``meta`` (`PoolText`)."""
    path = Path(path)
    if path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{path}: an unlabeled pool must be a .txt, .jsonl or .spacy file")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    texts: List[PoolText] = []
    if path.suffix == ".spacy":
        for i, doc in enumerate(read_docs(path, Vocab()), 1):
            texts.append(PoolText(([t.text for t in doc], [bool(t.whitespace_) for t in doc]), i))
    else:
        # lines end only at \n (read_text reads \r\n and \r as \n): str.splitlines() would also
        # end one inside a text at U+2028, U+0085, \x1c..., which a JSON string holds unescaped
        lines = read_text(path).split("\n")
        if path.suffix == ".txt":
            check_not_columns(path, lines)
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if path.suffix == ".txt":
                texts.append(PoolText(line, i))
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}:{i}: not a JSON line ({err.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise DataError(f"{path}:{i}: expected a JSON object with a \"text\" string")
            texts.append(PoolText(record["text"], i, record.get("meta")))
    texts = [t for t in texts if (t.item.strip() if isinstance(t.item, str) else t.item[0])]
    if not texts:
        raise DataError(f"{path}: the pool holds no text")
    return texts


def check_not_columns(path: PathLike, lines: Sequence[str]) -> None:
    """Refuse the lines of a .txt raw text that are a token/label column file (a train.tsv
    copied to .txt): read as a text a line, each token would be a sentence and its label a
    word of it. Only when every one of the first `COLUMN_CHECK_LINES` non-empty lines (two at
    least: one line of prose may end in a lone O, B or I) has two or more fields, separated by
    tabs or spaces, the last a label (`_LABEL`); prose has lines that do not."""
    first = list(islice(((i, line) for i, line in enumerate(lines, 1) if line.strip()), COLUMN_CHECK_LINES))
    if len(first) < 2 or not all(len(fields) >= 2 and _LABEL.fullmatch(fields[-1]) for fields in (line.split() for _, line in first)):
        return
    i, line = first[0]
    spacy_file = Path(path).with_suffix(".spacy")
    raise DataError(f"{path}:{i}: looks like a token/label column file ({line.strip()!r} ends in a label), not raw text (a text a line): "
                    f"give it as annotated data (--paths.train, --paths.dev), or, to use its sentences as raw text, convert it "
                    f"('spacy-auc-ner convert {path} {spacy_file}': its tokens are read, its labels dropped) and give {spacy_file}")


def pool_docs(nlp: Language, items: Sequence[PoolItem]) -> List[Doc]:
    """Unannotated Docs of the pool: texts through the tokenizer, token lists as they are."""
    return [nlp.make_doc(it) if isinstance(it, str) else Doc(nlp.vocab, words=it[0], spaces=it[1]) for it in items]


def write_pool(input_path: PathLike, output_path: PathLike, size: int, seed: int, limit: Optional[int] = None, overwrite: bool = False) -> int:
    """Write the pool that ``spacy_auc_ner.Pool.v1`` reads (the sentences of a corpus that the
    ``LowResource.v1`` draw of ``size`` with ``seed`` leaves out, without entities; ``limit``:
    the first of them in the draw's order) to a file, in the format of the suffix, for tools
    that read a file (``spacy-auc-ner pool``). Returns the number written."""
    input_path, output_path = Path(input_path), Path(output_path)
    if output_path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{output_path}: the pool is written as .spacy, .jsonl or .txt")
    if size < 0:
        raise DataError(f"--size: expected 0 or more sentences, got {size}")
    if limit is not None and limit < 1:
        raise DataError(f"--limit: expected a positive number of sentences, got {limit}")
    check_seed(seed, "--seed")
    docs = read_docs(input_path, Vocab())
    rest = pool_indices(len(docs), size, seed, limit or 0, where=input_path)
    check_output_file(output_path, [input_path], overwrite)
    return write_unlabeled(output_path, [docs[i] for i in rest])


def write_unlabeled(output_path: PathLike, docs: Iterable[Doc]) -> int:
    """Write ``docs`` without entities as ``.spacy``, ``.jsonl`` (``{"text": ...}``, what
    ``spacy.JsonlCorpus.v1`` reads) or ``.txt`` by the suffix; returns the number written."""
    output_path = Path(output_path)
    if output_path.suffix not in POOL_SUFFIXES:
        raise DataError(f"{output_path}: unlabeled text is written as .spacy, .jsonl or .txt")
    plain = [tokens_only(doc) for doc in docs]
    if output_path.suffix == ".spacy":
        write_docs(output_path, plain)  # no entity annotation to write: every token stays unannotated
    else:
        texts = [" ".join(doc.text.split()) for doc in plain]
        lines = [json.dumps({"text": t}, ensure_ascii=False) for t in texts] if output_path.suffix == ".jsonl" else texts
        write_text(output_path, "".join(line + "\n" for line in lines))
    return len(plain)
