"""Token/label column files (CoNLL-style: token first, label last, a blank line between
sentences, ``-DOCSTART-`` dropped): reading, scheme detection (BIO, IOB1, BIOES, BILOU),
normalisation to BIO, writing; problems are one :class:`DataError` line naming file and line.
"""
import re
from pathlib import Path
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .annotation_json import is_annotation_file, left_out_text, read_annotations
from .files import DataError, PathLike, atomic_output, not_utf8, write_text

TAG_SCHEMES = ("auto", "bio", "iob1", "bioes", "bilou")
DOCSTART = "-DOCSTART-"
_TAG = re.compile(r"^([BIESLU])-(\S.*)$")
_UNTYPED = frozenset("BIESLU")
# str.splitlines() would also end a line inside a token at \x1c, \x85, \u2028 and the like
_LINE_END = re.compile(r"\r\n|\r|\n")


class Sentence(NamedTuple):
    """One sentence: its tokens, its BIO labels and the 1-based line where it starts."""

    tokens: Tuple[str, ...]
    labels: Tuple[str, ...]
    line: int = 0


class _RawSentence(NamedTuple):
    tokens: List[str]
    tags: List[Tuple[str, str]]  # (prefix, type); prefix "O" for outside
    lines: List[int]


def read_columns(
    path: PathLike,
    *,
    scheme: str = "auto",
    token_column: int = 0,
    label_column: int = -1,
    untyped_type: Optional[str] = None,
) -> List[Sentence]:
    """Read a column file into sentences with BIO labels (``scheme``: one of TAG_SCHEMES);
    ``untyped_type`` types bare ``B``/``I``/... tags (e.g. the untyped S800 release: ``Species``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from None
    return parse_columns(
        text, path, scheme=scheme, token_column=token_column, label_column=label_column, untyped_type=untyped_type
    )


def parse_columns(
    text: str,
    path: PathLike = "<text>",
    *,
    scheme: str = "auto",
    token_column: int = 0,
    label_column: int = -1,
    untyped_type: Optional[str] = None,
) -> List[Sentence]:
    """:func:`read_columns` on text already read; ``path`` names it in errors."""
    if scheme not in TAG_SCHEMES:
        raise DataError(f"{path}: unknown label scheme {scheme!r}; choose one of {', '.join(TAG_SCHEMES)}")
    raw = _parse(text, path, token_column, label_column, untyped_type)
    if not raw:
        raise DataError(f"{path}: no sentences found (empty file, or only blank and -DOCSTART- lines)")
    if scheme == "auto":
        scheme = detect_scheme([s.tags for s in raw])
    normalise = _NORMALISERS["bioes" if scheme == "bilou" else scheme]
    return [Sentence(tuple(s.tokens), tuple(normalise(s, path)), s.lines[0]) for s in raw]


def _parse(text: str, path: PathLike, token_column: int, label_column: int, untyped_type: Optional[str]) -> List[_RawSentence]:
    sentences: List[_RawSentence] = []
    current = _RawSentence([], [], [])
    n_fields = None
    first_line = 0
    for i, line in enumerate(_LINE_END.split(text), start=1):
        fields = line.split("\t") if "\t" in line else line.split()
        fields = [f.strip() for f in fields]
        if not any(fields) or fields[0] == DOCSTART:
            if current.tokens:
                sentences.append(current)
                current = _RawSentence([], [], [])
            continue
        if len(fields) < 2:
            raise DataError(f"{path}:{i}: expected a token and a label column, found {len(fields)} field(s): {line.strip()!r}")
        if n_fields is None:
            n_fields, first_line = len(fields), i
        elif len(fields) != n_fields:
            raise DataError(f"{path}:{i}: found {len(fields)} columns, but line {first_line} has {n_fields}")
        try:
            token, label = fields[token_column], fields[label_column]
        except IndexError:
            raise DataError(f"{path}:{i}: no column {token_column} or {label_column} in {len(fields)} columns") from None
        if not token or not label:
            raise DataError(f"{path}:{i}: empty token or label in {line!r}")
        current.tokens.append(token)
        current.tags.append(_split_tag(label, untyped_type, path, i))
        current.lines.append(i)
    if current.tokens:
        sentences.append(current)
    return sentences


def _split_tag(label: str, untyped_type: Optional[str], path: PathLike, line: int) -> Tuple[str, str]:
    if label == "O":
        return ("O", "")
    m = _TAG.match(label)
    if m:
        return (m.group(1), m.group(2))
    if label in _UNTYPED:
        if untyped_type:
            return (label, untyped_type)
        raise DataError(f"{path}:{line}: untyped tag {label!r}; give the entity type to use for it (--untyped-type)")
    raise DataError(
        f"{path}:{line}: label {label!r} fits no known scheme (O, or B-/I- (BIO, IOB1), "
        "B-/I-/E-/S- (BIOES), B-/I-/L-/U- (BILOU) followed by a type)"
    )


def detect_scheme(sentences: Sequence[Sequence[Tuple[str, str]]]) -> str:
    """Guess the scheme of tagged sentences: bioes if any E/S/L/U prefix; iob1 if some entity
    starts with I- and every B- directly follows a token of its own type; else bio."""
    prefixes = {p for tags in sentences for p, _ in tags}
    if prefixes & set("ESLU"):
        return "bioes"
    i_starts = False
    b_only_after_same = True
    for tags in sentences:
        prev = ("O", "")
        for p, t in tags:
            continues = prev[0] != "O" and prev[1] == t
            if p == "I" and not continues:
                i_starts = True
            elif p == "B" and not continues:
                b_only_after_same = False
            prev = (p, t)
    return "iob1" if i_starts and b_only_after_same else "bio"


def _to_bio(s: _RawSentence, path: PathLike) -> List[str]:
    out = []
    prev = ("O", "")
    for (p, t), line in zip(s.tags, s.lines):
        if p == "O":
            out.append("O")
        elif p == "B":
            out.append("B-" + t)
        elif p == "I":
            if prev[0] == "O":
                where = "starts the sentence" if line == s.lines[0] else "follows O"
                raise DataError(f"{path}:{line}: I-{t} {where} (BIO needs B-{t} to start an entity; use --scheme iob1 if the file is IOB1)")
            if prev[1] != t:
                raise DataError(f"{path}:{line}: I-{t} follows {prev[0]}-{prev[1]}, an entity of a different type")
            out.append("I-" + t)
        else:
            raise DataError(f"{path}:{line}: tag {p}-{t} is not BIO (use --scheme bioes)")
        prev = (p, t)
    return out


def _iob1_to_bio(s: _RawSentence, path: PathLike) -> List[str]:
    out = []
    prev = ("O", "")
    for (p, t), line in zip(s.tags, s.lines):
        if p == "O":
            out.append("O")
        elif p == "B" or (p == "I" and (prev[0] == "O" or prev[1] != t)):
            out.append("B-" + t)
        elif p == "I":
            out.append("I-" + t)
        else:
            raise DataError(f"{path}:{line}: tag {p}-{t} is not IOB1 (use --scheme bioes)")
        prev = (p, t)
    return out


def _bioes_to_bio(s: _RawSentence, path: PathLike) -> List[str]:
    out = []
    open_type: Optional[str] = None  # type of the entity begun by B/I and not yet ended
    for (p, t), line in zip(s.tags, s.lines):
        if p in "BSU" or p == "O":
            if open_type is not None:
                raise DataError(f"{path}:{line}: entity {open_type} is not closed by E-/L- before {_fmt(p, t)}")
        elif open_type is None:
            raise DataError(f"{path}:{line}: {p}-{t} does not continue an entity (BIOES/BILOU start with B- or S-/U-)")
        elif open_type != t:
            raise DataError(f"{path}:{line}: {p}-{t} continues an entity of type {open_type}")
        if p == "O":
            out.append("O")
        elif p in "BSU":
            out.append("B-" + t)
        else:
            out.append("I-" + t)
        open_type = t if p in "BI" else None
    if open_type is not None:
        raise DataError(f"{path}:{s.lines[-1]}: entity {open_type} is not closed by E-/L- at the end of the sentence")
    return out


def _fmt(p: str, t: str) -> str:
    return "O" if p == "O" else f"{p}-{t}"


_NORMALISERS = {"bio": _to_bio, "iob1": _iob1_to_bio, "bioes": _bioes_to_bio}


# what ends a column line or a field when the file is read back: a token holding one is refused
_FIELD_BREAK = re.compile(r"[\t\r\n]")


def write_columns(path: PathLike, sentences: Iterable[Sentence]) -> int:
    """Write sentences as ``token<TAB>label`` lines, a blank line after each sentence, atomically;
    returns how many were written. Only what reads back as it was is written (a Doc's tokens from
    a .spacy file may be anything): spaCy's whitespace tokens outside every entity are left out
    (a column file has no line for them), and so is a sentence left without tokens; a token that
    would not read back (`column_line`) stops the write, naming it, with nothing written."""
    path = Path(path)
    kept = []
    for s in sentences:
        pairs = [(t, lab) for t, lab in zip(s.tokens, s.labels) if t.strip() or lab != "O"]
        for j, (token, label) in enumerate(zip(s.tokens, s.labels), 1):
            why = column_line(token, label)
            if why and (token.strip() or label != "O"):
                raise DataError(f"{path}: cannot write token {j} {token!r} of sentence {s.line} as a column line: {why}; write .spacy to keep it")
        if pairs:
            kept.append(Sentence(tuple(t for t, _ in pairs), tuple(lab for _, lab in pairs), s.line))
    if not kept:
        raise DataError(f"{path}: no sentence has a token to write (a column file would read back as empty)")
    write_text(path, columns_text(kept))
    return len(kept)


def column_line(token: str, label: str) -> str:
    """Why ``token<TAB>label`` would not read back as this token and label ("" when it would)."""
    if not token.strip():
        return "a whitespace token inside an entity" if token else "an empty token"
    for text, what in ((token, "the token"), (label, f"its label {label!r}")):
        if _FIELD_BREAK.search(text):
            return f"{what} holds a tab or a line break"
        if text != text.strip():
            return f"{what} begins or ends with whitespace, which reading strips"
    if token == DOCSTART:
        return f"reading drops a {DOCSTART} line as a document separator"
    return ""


def columns_text(sentences: Iterable[Sentence]) -> str:
    """The text of a ``token<TAB>label`` file: a blank line after every sentence."""
    lines: List[str] = []
    for s in sentences:
        lines.extend(f"{tok}\t{lab}" for tok, lab in zip(s.tokens, s.labels))
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


# ---------------------------------------------------------------------------------------------
# spaCy Docs


def sentences_to_docs(sentences: Iterable[Sentence], vocab) -> Iterator:
    """One Doc per sentence, tokens as given (a space between tokens), entities from BIO."""
    from spacy.tokens import Doc

    for s in sentences:
        spaces = [True] * len(s.tokens)
        if spaces:  # a Doc without tokens (a .spacy file may hold one) stays one
            spaces[-1] = False
        yield Doc(vocab, words=list(s.tokens), spaces=spaces, ents=list(s.labels))


def tokens_only(doc, vocab=None):
    """A Doc with the tokens and spaces of ``doc`` and no annotation, in ``vocab`` (default
    the doc's); made from the token arrays, no Token objects."""
    from spacy.attrs import ORTH, SPACY
    from spacy.tokens import Doc

    arr = doc.to_array([ORTH, SPACY]).reshape(-1, 2)
    words = [doc.vocab.strings[int(h)] for h in arr[:, 0]]
    return Doc(vocab or doc.vocab, words=words, spaces=arr[:, 1].astype(bool).tolist())


def is_docbin(path: PathLike) -> bool:
    return Path(path).suffix == ".spacy"


def read_docs(path: PathLike, vocab, *, lang: str = "en", **column_options) -> List:
    """Docs of a ``.spacy`` file, of an annotation tool's ``.jsonl`` / ``.json`` export (one Doc
    per record, texts without tokens split by the blank ``lang`` tokenizer; the records it
    leaves out are counted in one line on stderr: :mod:`.annotation_json`), or of a column
    file (one Doc per sentence)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if is_annotation_file(path):
        import sys

        docs, left_out = read_annotations(path, vocab, lang=lang)
        if left_out:
            print(f"{path}: {left_out_text(left_out)}", file=sys.stderr, flush=True)
        return docs
    if is_docbin(path):
        from spacy.tokens import DocBin

        try:
            docs = list(DocBin().from_disk(path).get_docs(vocab))
        except Exception as err:  # a corrupt file: srsly/msgpack errors vary
            raise DataError(f"{path}: not a readable .spacy (DocBin) file: {err}") from None
        if not docs:
            raise DataError(f"{path}: no sentences found")
        return docs
    return list(sentences_to_docs(read_columns(path, **column_options), vocab))


def docs_to_sentences(docs: Iterable) -> List[Sentence]:
    """Sentences (tokens, BIO labels) of Docs, one per Doc, from the token arrays; a token
    whose entity annotation is missing (spaCy's ``ent_iob == 0``) is written ``O``, as a
    column file has no mark for it. ``line`` is the Doc's 1-based position."""
    from spacy.attrs import ENT_IOB, ENT_TYPE, ORTH

    prefix = ("O", "I", "O", "B")  # spaCy's ENT_IOB codes: 0 missing, 1 I, 2 O, 3 B
    sentences = []
    for i, doc in enumerate(docs, start=1):
        arr = doc.to_array([ORTH, ENT_IOB, ENT_TYPE]).reshape(-1, 3)
        strings = doc.vocab.strings
        tokens = tuple(strings[int(h)] for h in arr[:, 0])
        labels = tuple(_fmt(prefix[int(iob)], strings[int(t)]) for iob, t in arr[:, 1:])
        sentences.append(Sentence(tokens, labels, i))
    return sentences


def write_docs(path: PathLike, docs: Iterable) -> int:
    """Write Docs to a ``.spacy`` file; returns how many."""
    from spacy.tokens import DocBin

    db = DocBin(attrs=["ORTH", "ENT_IOB", "ENT_TYPE"], store_user_data=False)
    n = 0
    for doc in docs:
        db.add(doc)
        n += 1
    with atomic_output(path) as tmp:
        db.to_disk(tmp)
    return n


# the names `write_sentences` writes: any other is refused, as a typo (x.spcy) or another
# format's name (x.json) would hold column text that a tool trusting the name fails to read
COLUMN_SUFFIXES = (".tsv", ".conll", ".txt", ".iob", ".iob2", ".bio", ".tab")


def check_sentences_output(path: PathLike, also: Sequence[str] = ()) -> None:
    """Refuse an output name that is neither ``.spacy`` nor a column file's (`COLUMN_SUFFIXES`)
    nor one of ``also`` (``convert`` writes ``.jsonl`` too)."""
    import difflib

    suffix = Path(path).suffix.lower()
    names = [".spacy", *also, *COLUMN_SUFFIXES]
    if suffix in names and (suffix == Path(path).suffix or suffix in COLUMN_SUFFIXES):
        return
    near = difflib.get_close_matches(suffix, names, n=1, cutoff=0.75)
    formats = ", ".join([".spacy", *also])
    raise DataError(f"{path}: sentences are written as {formats} or as a token<TAB>BIO column file ({', '.join(COLUMN_SUFFIXES)}), "
                    f"not as {Path(path).suffix or f'a name without a suffix ({path}/ is a folder)'}" + (f" (did you mean {near[0]}?)" if near else ""))


def write_sentences(path: PathLike, sentences: Sequence[Sentence]) -> int:
    """Write sentences as ``.spacy`` (by suffix) or as a column file; returns how many."""
    path = Path(path)
    if is_docbin(path):
        from spacy.vocab import Vocab

        return write_docs(path, sentences_to_docs(sentences, Vocab()))
    return write_columns(path, sentences)
