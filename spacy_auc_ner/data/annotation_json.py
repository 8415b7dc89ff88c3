"""Annotation tools' exports in and out: the JSON lines that spaCy, Prodigy, doccano and Label
Studio read and write, as Docs with entities.

Read, one record a line (``.jsonl``) or a JSON array of records (``.json``, Label Studio's
export), each record in one of these forms:

- spaCy / Prodigy: ``{"text", "spans": [{"start", "end", "label"}]}``, with or without
  ``"tokens": [{"text", "ws"}]`` (given, they are the Doc's tokens; else the language's
  tokenizer splits the text). Prodigy's ``"answer"`` of ``"reject"`` or ``"ignore"`` leaves
  the record out.
- doccano: ``{"text", "label": [[start, end, label]]}``, or ``"entities"`` holding such
  triples or ``{"start_offset", "end_offset", "label"}`` objects.
- Label Studio: ``{"data": {"text"}, "annotations": [{"result": [{"value": {"start", "end",
  "labels"}}]}]}``; the first annotation that was not cancelled is read, and a task with none
  is left out.

Offsets count characters of the text, end exclusive. They become token spans as spaCy's
``Doc.char_span`` makes them: ``alignment`` ``"strict"`` refuses a span that does not start and
end on token boundaries, ``"expand"`` widens it to the tokens it touches, ``"contract"``
narrows it to the tokens it covers whole. Every other token is ``O``. A span outside the text,
two spans that overlap and a record of no known form are refused in one line naming the file
and line (a ``.json`` array: the record's number).

Written (`write_annotations`, `doc_record`): the spaCy / Prodigy form with ``tokens``, so
that reading it back gives the same tokens and entities.
"""
import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from .files import DataError, PathLike, read_text, write_text

ALIGNMENTS = ("strict", "expand", "contract")
SUFFIXES = (".jsonl", ".json")
LEFT_OUT_ANSWERS = ("reject", "ignore")  # Prodigy's answers that are no annotation


class CharSpan(NamedTuple):
    start: int
    end: int
    label: str


class Record(NamedTuple):
    """One annotated text as read: where it is (``file:line``), its text, its character spans
    and, when the record gives them, its tokens as (text, followed by a space)."""

    where: str
    text: str
    spans: Tuple[CharSpan, ...]
    tokens: Optional[Tuple[Tuple[str, bool], ...]]


class Annotations(NamedTuple):
    """The Docs of a file and how many records were left out, by why (``reject``, ``ignore``,
    ``cancelled``: a Label Studio task with no annotation that was not cancelled)."""

    docs: List[Any]
    left_out: Counter


def is_annotation_file(path: PathLike) -> bool:
    return Path(path).suffix in SUFFIXES


def read_annotations(path: PathLike, vocab=None, *, lang: str = "en", alignment: str = "strict") -> Annotations:
    """The Docs of an annotation tool's ``.jsonl`` or ``.json`` file (module docstring), each
    with its entities set and every other token ``O``; texts without ``tokens`` are split by
    the blank ``lang`` pipeline's tokenizer."""
    import spacy

    if alignment not in ALIGNMENTS:
        raise DataError(f"--alignment must be one of {', '.join(ALIGNMENTS)}, not {alignment!r}")
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    nlp = spacy.blank(lang) if vocab is None else spacy.blank(lang, vocab=vocab)
    left_out: Counter = Counter()
    docs = []
    for record in parse_records(path, left_out):
        docs.append(record_doc(record, nlp, alignment))
    if not docs:
        said = f" ({left_out_text(left_out)})" if left_out else ""
        raise DataError(f"{path}: no annotated record found{said}")
    return Annotations(docs, left_out)


def left_out_text(left_out: Counter) -> str:
    """``3 records left out: 2 reject, 1 ignore`` ("" when none was)."""
    n = sum(left_out.values())
    if not n:
        return ""
    return f"{n} record{'' if n == 1 else 's'} left out: " + ", ".join(f"{count} {why}" for why, count in sorted(left_out.items()))


def parse_records(path: Path, left_out: Counter) -> Iterator[Record]:
    """The annotated records of the file, in order; the left-out ones counted in ``left_out``."""
    text = read_text(path)
    for where, raw in _raw_records(path, text):
        if not isinstance(raw, dict):
            raise DataError(f"{where}: expected a JSON object (an annotated text), not {type(raw).__name__}")
        why = _left_out(raw)
        if why:
            left_out[why] += 1
            continue
        yield _record(raw, where)


def _raw_records(path: Path, text: str) -> Iterator[Tuple[str, Any]]:
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{err.lineno}: not JSON ({err.msg})") from None
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON array of annotated texts (Label Studio's JSON export)")
        for i, raw in enumerate(data, 1):
            yield f"{path}: record {i}", raw
        return
    # lines end only at \n: a JSON string may hold U+2028 unescaped, which str.splitlines() ends
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            yield f"{path}:{i}", json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{i}: not a JSON line ({err.msg})") from None


def _left_out(raw: Dict[str, Any]) -> Optional[str]:
    answer = raw.get("answer")
    if answer in LEFT_OUT_ANSWERS:
        return str(answer)
    if "annotations" in raw and isinstance(raw["annotations"], list) and "spans" not in raw:
        if not [a for a in raw["annotations"] if isinstance(a, dict) and not a.get("was_cancelled")]:
            return "cancelled or not annotated"
    return None


def _record(raw: Dict[str, Any], where: str) -> Record:
    if "spans" in raw:
        text = _text(raw.get("text"), where, "text")
        spans = [_span_object(s, where, "start", "end") for s in _list(raw["spans"], where, "spans")]
        return Record(where, text, _checked(spans, text, where), _tokens(raw.get("tokens"), text, where))
    if "annotations" in raw and isinstance(raw.get("data"), dict):
        text = _text(raw["data"].get("text"), where, "data.text")
        annotation = next(a for a in raw["annotations"] if isinstance(a, dict) and not a.get("was_cancelled"))
        spans = []
        for item in _list(annotation.get("result", []), where, "annotations[].result"):
            value = item.get("value") if isinstance(item, dict) else None
            if not isinstance(value, dict) or "labels" not in value:
                continue  # choices, relations, text areas: no entity
            labels = value["labels"]
            if not isinstance(labels, list) or len(labels) != 1:
                raise DataError(f"{where}: a Label Studio region must hold one label, not {json.dumps(labels)}")
            spans.append(_span_object({**value, "label": labels[0]}, where, "start", "end"))
        return Record(where, text, _checked(spans, text, where), None)
    for key in ("label", "entities"):
        if key in raw:
            text = _text(raw.get("text"), where, "text")
            spans = [_doccano_span(s, where, key) for s in _list(raw[key], where, key)]
            return Record(where, text, _checked(spans, text, where), None)
    keys = ", ".join(sorted(raw)) or "none"
    raise DataError(f"{where}: not an annotated text of a known form: expected \"spans\" (spaCy, Prodigy), \"label\" or "
                    f"\"entities\" (doccano) or \"data\" with \"annotations\" (Label Studio); its keys: {keys}")


def _text(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: \"{key}\" must be a text that is not empty, not {json.dumps(value)}")
    return value


def _list(value: Any, where: str, key: str) -> List[Any]:
    if not isinstance(value, list):
        raise DataError(f"{where}: \"{key}\" must be a list, not {json.dumps(value)}")
    return value


def _offset(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _span_object(span: Any, where: str, start: str, end: str) -> CharSpan:
    if not isinstance(span, dict) or not _offset(span.get(start)) or not _offset(span.get(end)) \
            or not isinstance(span.get("label"), str) or not span["label"].strip():
        raise DataError(f"{where}: a span must be {{\"{start}\": int, \"{end}\": int, \"label\": text}}, not {json.dumps(span)}")
    return CharSpan(span[start], span[end], span["label"])


def _doccano_span(span: Any, where: str, key: str) -> CharSpan:
    if isinstance(span, dict):
        return _span_object(span, where, "start_offset", "end_offset")
    if not isinstance(span, list) or len(span) != 3 or not _offset(span[0]) or not _offset(span[1]) \
            or not isinstance(span[2], str) or not span[2].strip():
        raise DataError(f"{where}: \"{key}\" must hold [start, end, label] triples, not {json.dumps(span)}")
    return CharSpan(*span)


def _checked(spans: List[CharSpan], text: str, where: str) -> Tuple[CharSpan, ...]:
    """The spans in text order, each inside the text and none overlapping another (an exact
    repeat of one is read once)."""
    ordered = sorted(set(spans))
    for s in ordered:
        if not 0 <= s.start < s.end <= len(text):
            raise DataError(f"{where}: span [{s.start}, {s.end}) {s.label!r} lies outside the text of {len(text)} "
                            f"characters (a span needs 0 <= start < end <= {len(text)})")
    for a, b in zip(ordered, ordered[1:]):
        if b.start < a.end:
            raise DataError(f"{where}: spans [{a.start}, {a.end}) {a.label!r} {text[a.start:a.end]!r} and "
                            f"[{b.start}, {b.end}) {b.label!r} {text[b.start:b.end]!r} overlap; an entity token has one label")
    return tuple(ordered)


def _tokens(tokens: Any, text: str, where: str) -> Optional[Tuple[Tuple[str, bool], ...]]:
    if tokens is None:
        return None
    items = _list(tokens, where, "tokens")
    if not all(isinstance(t, dict) and isinstance(t.get("text"), str) and t["text"] for t in items):
        raise DataError(f"{where}: \"tokens\" must be objects with a \"text\" that is not empty")
    out = tuple((t["text"], bool(t.get("ws", True))) for t in items)
    if "".join(word + (" " if ws else "") for word, ws in out).rstrip(" ") != text.rstrip(" "):
        raise DataError(f"{where}: the \"tokens\" and their \"ws\" do not spell the \"text\"")
    return out


def record_doc(record: Record, nlp, alignment: str = "strict"):
    """The Doc of a record, its spans as entities (as ``Doc.char_span`` with ``alignment``)."""
    from spacy.tokens import Doc

    if record.tokens is None:
        doc = nlp.make_doc(record.text)
    else:
        doc = Doc(nlp.vocab, words=[w for w, _ in record.tokens], spaces=[ws for _, ws in record.tokens])
    ents: List[Any] = []
    for s in record.spans:
        span = doc.char_span(s.start, s.end, label=s.label, alignment_mode=alignment)
        if span is None or not len(span):
            how = "falls on no whole token" if alignment == "contract" else "does not start and end on token boundaries"
            near = doc.char_span(s.start, s.end, alignment_mode="expand")
            tokens = f" (the tokens it touches: {near.text!r})" if near is not None else ""
            fix = "" if alignment != "strict" else "; convert it with --alignment expand or contract to widen or narrow it"
            raise DataError(f"{record.where}: span [{s.start}, {s.end}) {s.label!r} {record.text[s.start:s.end]!r} {how}{tokens}{fix}")
        if ents and span.start < ents[-1].end:
            raise DataError(f"{record.where}: spans {ents[-1].text!r} and {span.text!r} overlap once aligned to tokens ({alignment})")
        ents.append(span)
    doc.set_ents(ents, default="outside")
    return doc


def doc_record(doc) -> Dict[str, Any]:
    """A Doc as the spaCy / Prodigy record: text, tokens (``ws``: a space follows) and spans
    (character offsets; ``token_end`` inclusive, as Prodigy writes it)."""
    tokens = [{"text": t.text, "start": t.idx, "end": t.idx + len(t), "id": t.i, "ws": bool(t.whitespace_)} for t in doc]
    spans = [{"start": e.start_char, "end": e.end_char, "token_start": e.start, "token_end": e.end - 1, "label": e.label_}
             for e in doc.ents]
    return {"text": doc.text, "tokens": tokens, "spans": spans}


def write_annotations(path: PathLike, records: Iterable[Dict[str, Any]]) -> int:
    """Write records as JSON lines, atomically; returns how many."""
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)
