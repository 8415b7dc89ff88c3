"""The known corpora (CoNLL-2003, NCBI disease, S800): a local copy where the library's search
finds one (`locate`: ``spacy_auc_ner``'s `locate_corpus`, the folders README names), else the
original files downloaded at pinned commits, their git blob ids checked and converted to
``token<TAB>BIO`` as ``shared/data/SOURCES.md`` describes. The table of sources and checksums is
the library's `CORPORA`, which the root project's corpus step reads too."""
import hashlib
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Dict, List, Optional

from spacy_auc_ner.api import CORPORA, DataError, PathLike, Sentence, doc_bio_tags, locate_corpus, parse_columns, read_docs, write_sentences

# the splits of a corpus folder: <corpus>/{train,dev,test}.{tsv,spacy}
SPLITS = ("train", "dev", "test")
locate = locate_corpus  # the first folder of the library's search holding a corpus (the lab's commands and scripts call it so)


def read_sentences(path: PathLike, **column_options) -> List[Sentence]:
    """Sentences of a column file or of a ``.spacy`` file, one per Doc as `read_docs` reads
    them (what the readers train on; tokens with missing entity annotation count as O)."""
    from spacy.vocab import Vocab

    docs = read_docs(path, Vocab(), **column_options)
    return [Sentence(tuple(t.text for t in doc), tuple(doc_bio_tags(doc)), i + 1) for i, doc in enumerate(docs)]


def read_local(path: Path, untyped_type: Optional[str]) -> List[Sentence]:
    """The sentences of a local copy's ``token<TAB>BIO`` file, parsed as a download is (no Doc
    in between: its checksum is of this text)."""
    return parse_columns(path.read_text(encoding="utf-8-sig"), path, scheme="bio", untyped_type=untyped_type)


def get_source(name: str):
    """The `CORPORA` entry of corpus `name`, or one line naming the known corpora."""
    if name not in CORPORA:
        raise DataError(f"unknown corpus {name!r}; known corpora: {', '.join(CORPORA)}")
    return CORPORA[name]


def git_blob_id(content: bytes) -> str:
    """The git blob id of a file's bytes: sha1 of ``b"blob <len>\\0" + content``."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def fetch_url(url: str, timeout: float = 60.0) -> bytes:
    """Download a URL's bytes (the default fetcher; tests replace it)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as err:
        raise DataError(f"could not download {url}: {getattr(err, 'reason', err)}") from None


def convert_original(source, split: str, content: bytes) -> List[Sentence]:
    """The sentences of an original file of `source` (a `CORPORA` entry): the token and NER
    columns, -DOCSTART- lines dropped, bare B/I tags typed, BIO checked."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{source.url(split)}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_columns(text, source.url(split), scheme="bio", untyped_type=source.untyped_type, **source.columns)


def download(source, fetch: Optional[Callable[[str], bytes]] = None) -> Dict[str, List[Sentence]]:
    """Fetch every split's original file of `source` (a `CORPORA` entry), check its blob id and convert it. Raises DataError
    on the first mismatch, before anything is written."""
    out = {}
    for split in SPLITS:
        url = source.url(split)
        content = (fetch or fetch_url)(url)
        found, expected = git_blob_id(content), source.files[split][1]
        if found != expected:
            raise DataError(f"{url}: checksum mismatch: git blob id {found}, expected {expected}; nothing was written")
        out[split] = convert_original(source, split, content)
    return out


def get_corpus(name: str, out_dir: Path, data_dir: Optional[Path] = None, fmt: str = "spacy",
               fetch: Optional[Callable[[str], bytes]] = None, cwd: Optional[Path] = None,
               overwrite: bool = False) -> dict:
    """Write ``out_dir/{train,dev,test}.{spacy|tsv}`` for a known corpus from a local copy when
    one is found, else from the original files (downloaded and checked). Returns a summary.
    Never writes over the local copy it reads, nor over an existing file unless `overwrite`
    (both checked before anything is read or downloaded)."""
    from spacy_auc_ner.api import check_output_file

    from .store import check_not_in_store

    if fmt not in ("spacy", "tsv"):
        raise DataError(f"unknown output format {fmt!r}; choose spacy or tsv")
    source = get_source(name)
    local = locate(name, data_dir, cwd)
    inputs = [] if local is None else [local / f"{split}.tsv" for split in SPLITS]
    for split in SPLITS:
        check_output_file(Path(out_dir) / f"{split}.{fmt}", inputs, overwrite)
    check_not_in_store(out_dir)
    if local is not None:
        splits = {split: read_local(local / f"{split}.tsv", source.untyped_type) for split in SPLITS}
        origin = str(local)
    else:
        splits = download(source, fetch)
        origin = f"https://github.com/{source.repo} @ {source.commit[:12]}"
    warnings = source.differences(splits)
    written = {}
    for split, sents in splits.items():
        path = Path(out_dir) / f"{split}.{fmt}"
        write_sentences(path, sents)  # by its suffix
        written[split] = {"path": str(path), "sentences": len(sents)}
    for w in warnings:
        print(f"Warning: {w}", file=sys.stderr)
    return {"corpus": name, "origin": origin, "files": written, "warnings": warnings}
