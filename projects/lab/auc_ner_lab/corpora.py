"""The known corpora (CoNLL-2003, NCBI disease, S800): finding local copies, or downloading the
original files at pinned commits, checking their git blob ids and converting them to
``token<TAB>BIO`` as ``shared/data/SOURCES.md`` describes."""
import hashlib
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from spacy_auc_ner.api import (
    DataError,
    PathLike,
    Sentence,
    columns_text,
    doc_bio_tags,
    parse_columns,
    read_columns,
    read_docs,
    sentences_to_docs,
    write_columns,
    write_docs,
)

# the splits of a corpus folder: <corpus>/{train,dev,test}.{tsv,spacy}
SPLITS = ("train", "dev", "test")
ENV_VAR = "SPACY_AUC_NER_DATA"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class CorpusSource:
    """Where a corpus comes from and how its original files become BIO column files."""

    name: str
    description: str
    repo: str
    commit: str
    files: Dict[str, Tuple[str, str]]  # split -> (path in repo, git blob id)
    sha256: Dict[str, str]  # split -> sha256 of the converted token<TAB>BIO file
    untyped_type: Optional[str] = None  # type given to bare B/I tags
    license: str = ""
    columns: Dict[str, int] = field(default_factory=lambda: {"token_column": 0, "label_column": -1})

    def url(self, split: str) -> str:
        return RAW_URL.format(repo=self.repo, commit=self.commit, path=self.files[split][0])


CORPORA: Dict[str, CorpusSource] = {
    c.name: c
    for c in (
        CorpusSource(
            name="conll2003",
            description="CoNLL-2003 English NER (Reuters news; PER, ORG, LOC, MISC)",
            repo="kyzhouhzau/BERT-NER",
            commit="0f77e478872453df51cd3c65d1a39b12d9617f9d",
            files={
                "train": ("old_version/NERdata/train.txt", "171cfe484671d6fa04e99526cbafd45e83842f54"),
                "dev": ("old_version/NERdata/dev.txt", "33b26c6eda1253d9e1384ac1f5b513ff8a4e3164"),
                "test": ("old_version/NERdata/test.txt", "b0eee5d55d63b0038c940d7584bb85c89d91a9be"),
            },
            sha256={
                "train": "fcbf6fb1ff226d17111e25d79fd1dfc9f768177fed278f14d4e77b27a7b0fd18",
                "dev": "c2a285c3ab24e58d05b43a1afb050c29acbf09b4d175e3197a517544abd1ff92",
                "test": "3cac49eb9986ead18a2310761315b1e65f0ec18ebf3be1fe1cdd650ed80852c5",
            },
            license="Reuters RCV1 text: research use under the Reuters corpus licence",
            # token POS chunk NER: keep columns 1 and 4
            columns={"token_column": 0, "label_column": 3},
        ),
        CorpusSource(
            name="ncbi_disease",
            description="NCBI disease corpus (PubMed abstracts; Disease)",
            repo="cambridgeltl/MTL-Bioinformatics-2016",
            commit="df0df02fae6dbb87d88ffcf323b9096528f06f84",
            files={
                "train": ("data/NCBI-disease-IOB/train.tsv", "d2d646eead9fabe3b1fe0391035bd135d32051c7"),
                "dev": ("data/NCBI-disease-IOB/devel.tsv", "152e9b9d3b4275a1bb9a435b0783946ef40208fe"),
                "test": ("data/NCBI-disease-IOB/test.tsv", "6217f611e1517a70e5bd645b9dea34f7f9bf594f"),
            },
            sha256={
                "train": "58379baf4614b8d757d93dd7a21b202849ca99f9b9d71b49185523ff5443300c",
                "dev": "b4e1e7efcc2a35047bf2f3d281648357470e674f555d4a26a0049ac37d59cc61",
                "test": "8f088ce45dc4746592188f9e69de3d89d87f3bb8f0ed8c4a287d018123fa148d",
            },
            license="CC BY 4.0 (MTL-Bioinformatics-2016)",
        ),
        CorpusSource(
            name="s800",
            description="SPECIES-800 (PubMed abstracts; Species), BioBERT split",
            repo="shreyashub/BioFLAIR",
            commit="9edc438997baca6337552639120e363b9894cc98",
            files={
                "train": ("data/ner/s800/train.tsv", "a3abafa01885fb0a36c577a11c2c884cbfb5f3c9"),
                "dev": ("data/ner/s800/devel.tsv", "e6ce80e54ac83b1f9a1cb0cc9f3f56b8333634b0"),
                "test": ("data/ner/s800/test.tsv", "5a1c7c0f29f8007823a0e8cf63f2cc4eff51d52e"),
            },
            sha256={
                "train": "d8e109ed4289567c8fd544f781c4b37cb472737f08cb42af91bfc1e7c503fa7e",
                "dev": "617b1cd596bb664a00325697d3d8a7e0c9fb1d9f08004e1e24aa5aa3099f551d",
                "test": "decd7a0af93c059c36eda7bbaa8c43c9fd106ce667d4ca38a79f6941c335a54c",
            },
            untyped_type="Species",
            license="S800 (species.jensenlab.org): research use; cite Pafilis et al. 2013",
        ),
    )
}


def read_sentences(path: PathLike, **column_options) -> List[Sentence]:
    """Sentences of a column file or of a ``.spacy`` file (one sentence per Doc; tokens with
    missing entity annotation count as O)."""
    if Path(path).suffix == ".spacy":
        from spacy.vocab import Vocab

        docs = read_docs(path, Vocab())
        return [Sentence(tuple(t.text for t in doc), tuple(doc_bio_tags(doc)), i + 1) for i, doc in enumerate(docs)]
    return read_columns(path, **column_options)


def get_source(name: str) -> CorpusSource:
    if name not in CORPORA:
        raise DataError(f"unknown corpus {name!r}; known corpora: {', '.join(CORPORA)}")
    return CORPORA[name]


def git_blob_id(content: bytes) -> str:
    """The git blob id of a file's bytes: sha1 of ``b"blob <len>\\0" + content``."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def data_dirs(data_dir: Optional[Path] = None, cwd: Optional[Path] = None) -> List[Path]:
    """The folders searched for ``NAME/{train,dev,test}.tsv``, in order: ``data_dir`` when
    given, then ``$SPACY_AUC_NER_DATA`` when set, then ``assets/`` and ``data/`` under the
    working folder and ``shared/data`` in the working folder or any parent
    (``../shared/data`` ...). A project can so name a default folder and still find the
    others."""
    dirs = [Path(data_dir)] if data_dir is not None else []
    if os.environ.get(ENV_VAR):
        dirs.append(Path(os.environ[ENV_VAR]))
    cwd = Path(cwd or Path.cwd()).resolve()
    dirs += [cwd / "assets", cwd / "data"] + [p / "shared" / "data" for p in (cwd, *cwd.parents)]
    return list(dict.fromkeys(dirs))


def locate(name: str, data_dir: Optional[Path] = None, cwd: Optional[Path] = None) -> Optional[Path]:
    """The first searched folder holding all three split files of the corpus, or None."""
    for root in data_dirs(data_dir, cwd):
        if all((root / name / f"{split}.tsv").is_file() for split in SPLITS):
            return root / name
    return None


def fetch_url(url: str, timeout: float = 60.0) -> bytes:
    """Download a URL's bytes (the default fetcher; tests replace it)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as err:
        raise DataError(f"could not download {url}: {getattr(err, 'reason', err)}") from None


def convert_original(source: CorpusSource, split: str, content: bytes) -> List[Sentence]:
    """The sentences of an original file: the token and NER columns, -DOCSTART- lines
    dropped, bare B/I tags typed, BIO checked."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{source.url(split)}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_columns(text, source.url(split), scheme="bio", untyped_type=source.untyped_type, **source.columns)


def download(source: CorpusSource, fetch: Optional[Callable[[str], bytes]] = None) -> Dict[str, List[Sentence]]:
    """Fetch every split's original file, check its blob id and convert it. Raises DataError
    on the first mismatch, before anything is written."""
    fetch = fetch or fetch_url
    out = {}
    for split in SPLITS:
        url = source.url(split)
        content = fetch(url)
        expected = source.files[split][1]
        found = git_blob_id(content)
        if found != expected:
            raise DataError(f"{url}: checksum mismatch: git blob id {found}, expected {expected}; nothing was written")
        out[split] = convert_original(source, split, content)
    return out


def get_corpus(
    name: str,
    out_dir: Path,
    data_dir: Optional[Path] = None,
    fmt: str = "spacy",
    fetch: Optional[Callable[[str], bytes]] = None,
    cwd: Optional[Path] = None,
    overwrite: bool = False,
) -> dict:
    """Write ``out_dir/{train,dev,test}.{spacy|tsv}`` for a known corpus from a local copy when
    one is found, else from the original files (downloaded and checked). Returns a summary.
    Never writes over the local copy it reads, nor over an existing file unless `overwrite`
    (both checked before anything is read or downloaded)."""
    from spacy.vocab import Vocab

    from spacy_auc_ner.api import check_output_file, read_columns

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
        splits = {split: read_columns(local / f"{split}.tsv", scheme="bio") for split in SPLITS}
        origin = str(local)
    else:
        splits = download(source, fetch)
        origin = f"https://github.com/{source.repo} @ {source.commit[:12]}"
    warnings = []
    for split, sents in splits.items():
        digest = hashlib.sha256(columns_text(sents).encode("utf-8")).hexdigest()
        if digest != source.sha256[split]:
            warnings.append(f"{name}/{split}: content differs from the reference copy (sha256 {digest[:12]}..., expected {source.sha256[split][:12]}...)")
    out_dir = Path(out_dir)
    written = {}
    for split, sents in splits.items():
        path = out_dir / f"{split}.{fmt}"
        if fmt == "tsv":
            write_columns(path, sents)
        else:
            write_docs(path, sentences_to_docs(sents, Vocab()))
        written[split] = {"path": str(path), "sentences": len(sents)}
    for w in warnings:
        print(f"Warning: {w}", file=sys.stderr)
    return {"corpus": name, "origin": origin, "files": written, "warnings": warnings}
